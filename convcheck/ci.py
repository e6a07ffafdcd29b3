"""The sanitizer CI job: build, replay the corpus, a time-boxed two-engine campaign.

Everything it finds is minimised, printed as a reproducer, written as a new corpus entry
under the results folder (torch's own bugs apart, in its torch folder), and reported as
JUnit XML (one test case per corpus entry and per campaign) and SARIF. The exit code is
the verdict: 0 nothing new, 1 findings.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from convcheck import campaign, corpus, engines, files, registry, report_ci
from convcheck.findings import Finding
from convcheck.judges import Judges
from convcheck.progress import Progress


@dataclass
class Replayed:
    entry: corpus.Entry
    findings: list[Finding]


@dataclass
class CampaignResult:
    engine: str
    seconds: float
    cases: int
    new: list[Finding] = field(default_factory=list)
    skipped: str = ""
    run: campaign.Campaign | None = None  # for --report: every finding and when it came

    @property
    def too_few(self) -> bool:
        """Judged too few cases to pass (``Campaign.too_few``)."""
        return self.run is not None and self.run.too_few


@dataclass
class CiResult:
    replayed: list[Replayed]
    campaigns: list[CampaignResult]
    # A signal stopped the job: what it reports is what it had judged until then.
    stopped: bool = False
    # The model's sites on ``current`` that the solver did not prove, one line each.
    unproven: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        """torch's own bugs are reported, but never fail the kernel's CI."""
        findings = [f for r in self.replayed for f in r.findings]
        findings += [f for c in self.campaigns for f in c.new]
        return bool(self.unproven) or any(f.about_kernel for f in findings)

    @property
    def unfinished(self) -> str:
        """Why the job cannot say "passed" though nothing failed ("" when it can)."""
        if self.stopped:
            return "interrupted: a signal stopped the job before it was done"
        starved = [c.engine for c in self.campaigns if c.too_few]
        if starved:
            return f"incomplete: campaign {', '.join(starved)} judged too few cases to pass"
        return ""


def run_ci(
    judges: Judges,
    entries: list[corpus.Entry],
    results_dir: Path,
    budget: campaign.Budget,
    seed: int,
    progress: TextIO,
    minimize_seconds: float | None = None,
    torch_dir: Path | None = None,
    shards: int = 1,
) -> CiResult:
    """Replay ``entries``, prove ``current``'s 1-D sites, then a campaign per engine, each
    judged in ``shards`` processes from 2 on (as ``fuzz --jobs``), on its share of
    ``budget``."""
    progress.write(
        f"replaying {len(entries)} corpus entries on {judges.target or judges.revision}\n"
    )
    replayed = [
        Replayed(entry, found)
        for entry, found in zip(entries, judges.evaluate([e.case for e in entries]), strict=True)
    ]
    unproven = prove_sites(judges.revision, progress, judges.op)
    if judges.op == registry.DEFAULT_OP:
        solve_ahead(engines.names(ci=True), [judges.revision], progress)
    known = {k for e in entries for k in e.keys}
    new_dir = results_dir / "corpus"
    meta = {"found_by": "convcheck ci"}
    results = []
    plan = [(name, engines.unavailable(name)) for name in engines.names(ci=True)]
    share = budget.share(sum(1 for _, why in plan if not why))
    for name, why in plan:
        if judges.stopped:
            why = why or "not run: a signal stopped the job"
        if why:
            results.append(CampaignResult(name, 0.0, 0, skipped=why))
            continue
        progress.write(f"campaign: {name} engine for {share.describe()}\n")
        with Progress(progress, share, name) as shown:
            run = campaign.Campaign(
                judges, new_dir, meta, shown, known, share, torch_dir, shards=shards
            )
            run.explore(engines.load(name), seed)
            run.minimize_all(only=lambda f: f.about_kernel, seconds=minimize_seconds)
        new = run.new_findings()
        known |= {k for f in new for k in f.keys}
        results.append(CampaignResult(name, run.stats.elapsed, run.stats.cases, new, run=run))
    outcome = CiResult(replayed, results, judges.stopped, unproven)
    write_results(results_dir, outcome)
    return outcome


def solve_ahead(names: list[str], revisions: list[str], out: TextIO, always=False) -> None:
    """What the engines ``names`` judge first, solved and cached before any campaign's
    budget starts (``convcheck.engines.solver.solve_ahead``); without z3, nothing."""
    if not engines.unavailable("solver"):
        from convcheck.engines.solver import solve_ahead as solve

        solve(names, revisions, out, always)


def prove_sites(revision: str, progress: TextIO, op: str = registry.DEFAULT_OP) -> list[str]:
    """On ``current``, every site of ``op``'s must be proven, for calls of every rank: the
    lines of those that are not (``convcheck prove`` is the same proof, with its report)."""
    if revision != "current" or engines.unavailable("solver"):
        return []
    from convcheck.solver.prove import gaps

    progress.write(f"prove: every site of {op}'s current calls, of every rank it solves\n")
    found = gaps(revision, op)
    for line in found:
        progress.write(f"prove: NOT proven: {line}\n")
    return found


def write_results(results_dir: Path, outcome: CiResult) -> None:
    """JUnit and SARIF, each replaced atomically: a CI system never reads half a file."""
    files.folder(results_dir, "results folder")
    sarif = json.dumps(report_ci.sarif(outcome), indent=2) + "\n"
    for name, text in (("junit.xml", report_ci.junit_xml(outcome)), ("results.sarif", sarif)):
        files.write_atomically(results_dir / name, text, "results folder")
