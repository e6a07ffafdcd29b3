"""A fuzz campaign: engines propose cases, the campaign judges, keeps and minimises.

An *engine* is a small function ``engine(campaign, seconds, seed)`` that proposes cases
through ``campaign.submit`` until its time is up. Everything else is here and shared: the
judges, deduplication by signature, the corpus written at once, minimisation, progress.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from convcheck import corpus
from convcheck.case import Case
from convcheck.engine import Engine, Finding
from convcheck.generate import RandomSource, build_case
from convcheck.shrink import minimize

BATCH = 256


@dataclass
class Stats:
    cases: int = 0
    started: float = field(default_factory=time.monotonic)
    first_found: dict[str, float] = field(default_factory=dict)  # signature key -> seconds

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started


class Campaign:
    def __init__(
        self,
        engine: Engine,
        corpus_dir: Path | None = None,
        meta: dict | None = None,
        progress: TextIO | None = None,
        known: set[str] = frozenset(),
    ) -> None:
        self.engine = engine
        self.corpus_dir = corpus_dir
        self.meta = meta or {}
        self.progress = progress
        self.known = set(known)  # signatures already in the corpus: not new
        self.found: dict[str, Finding] = {}
        self.minimized: set[str] = set()
        self.stats = Stats()
        self._last_progress = 0.0

    # -- what engines call ----------------------------------------------------------
    def submit(self, cases: list[Case]) -> list[list[Finding]]:
        """Judge the cases; keep every new signature at once. Returns each case's findings."""
        per_case = self.engine.evaluate(cases, thrifty=True)
        self.stats.cases += len(cases)
        for found in per_case:
            for finding in found:
                kept = self.found.get(finding.key)
                if kept is None:
                    self._keep(finding)
                elif finding.key not in self.minimized and complexity(finding.case) < complexity(
                    kept.case
                ):
                    # A simpler witness of a known finding: shrinking starts from the best.
                    self.found[finding.key] = finding
        self._show_progress()
        return per_case

    def _keep(self, finding: Finding) -> None:
        self.found[finding.key] = finding
        self.stats.first_found[finding.key] = self.stats.elapsed
        if self.corpus_dir is not None and finding.key not in self.known:
            corpus.write(
                self.corpus_dir, finding, self.engine.revision, self.engine.target, self.meta
            )

    # -- after the engines ----------------------------------------------------------
    def keeps(self, signature: tuple[str, ...]) -> Callable[[list[Case]], list[bool]]:
        def judge(cases: list[Case]) -> list[bool]:
            return [
                any(f.signature == signature for f in found)
                for found in self.engine.evaluate(cases)
            ]

        return judge

    def minimize_all(
        self,
        max_evaluations: int = 600,
        seconds_each: float = 20.0,
        only: Callable[[Finding], bool] | None = None,
    ) -> None:
        for key, finding in list(self.found.items()):
            # Known findings are in the corpus already, in their minimised form.
            if key in self.minimized or key in self.known:
                continue
            if finding.kind == "tool-error":  # convcheck's own failure: no bug to shrink
                continue
            if only is not None and not only(finding):
                continue
            small = minimize(
                finding.case, self.keeps(finding.signature), max_evaluations, seconds_each
            )
            again = [f for f in self.engine.evaluate([small])[0] if f.key == key]
            if again:
                self.found[key] = again[0]
                if self.corpus_dir is not None and key not in self.known:
                    corpus.write(
                        self.corpus_dir,
                        again[0],
                        self.engine.revision,
                        self.engine.target,
                        self.meta,
                    )
            self.minimized.add(key)
            self._show_progress(force=True, note=f"minimised {finding.kind}")

    def new_findings(self, about_kernel: bool = False) -> list[Finding]:
        """New this campaign; ``about_kernel`` leaves torch's own bugs out."""
        return [
            f
            for k, f in self.found.items()
            if k not in self.known and (f.about_kernel or not about_kernel)
        ]

    def _show_progress(self, force: bool = False, note: str = "") -> None:
        if self.progress is None:
            return
        now = time.monotonic()
        if not force and now - self._last_progress < 1.0:
            return
        self._last_progress = now
        kinds = Counter(f.kind for f in self.found.values())
        rate = self.stats.cases / max(self.stats.elapsed, 1e-9)
        summary = ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())) or "none"
        line = (
            f"[{self.stats.elapsed:6.1f}s] {self.stats.cases:,} cases ({rate:,.0f}/s); "
            f"findings: {summary}"
        )
        if note:
            line += f"; {note}"
        end = "\r" if self.progress.isatty() else "\n"
        self.progress.write(line.ljust(100) + end)
        self.progress.flush()


def complexity(case: Case) -> int:
    """Bigger tensors, more dims and larger integers make a case harder to read."""
    tensors = [case.input, case.weight, case.out] + ([case.bias] if case.bias else [])
    ints = [*case.stride, *case.padding, *case.dilation, *case.output_padding, case.groups]
    return (
        sum(t.numel for t in tensors)
        + 4 * sum(t.rank for t in tensors)
        + sum(abs(v).bit_length() for v in ints)
    )


# -- engines ------------------------------------------------------------------------


def random_engine(campaign: Campaign, seconds: float, seed: int) -> None:
    """Seeded bulk generation: the fastest way through the case space."""
    src = RandomSource(seed)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        campaign.submit([build_case(src) for _ in range(BATCH)])


def hypothesis_engine(campaign: Campaign, seconds: float, seed: int) -> None:
    """Hypothesis drives the same construction; each new signature fails the property
    with an exception class of its own, so Hypothesis keeps distinct bugs apart and
    shrinks each. The campaign has already kept the finding, so nothing is lost if the
    run ends before shrinking does; the run repeats with new seeds until time is up."""
    from convcheck._hypothesis_engine import run_property

    deadline = time.monotonic() + seconds
    round_seed = seed
    while time.monotonic() < deadline:
        run_property(campaign, deadline, round_seed)
        round_seed += 1


def atheris_engine(campaign: Campaign, seconds: float, seed: int) -> None:
    """libFuzzer in a child process (it owns its process); findings come back through
    the corpus folder, where the child writes them the moment they are new."""
    import json
    import subprocess
    import sys

    from convcheck import fuzzed, sandbox

    engine = campaign.engine
    with sandbox.private_temporary_directory("convcheck-atheris-") as tmp:
        work = Path(tmp)
        findings_dir = campaign.corpus_dir or work / "findings"
        seeds = work / "seeds"
        seeds.mkdir()
        # Seeds: the bundled examples (one valid call of each rank) and the corpus.
        for example in example_cases():
            (seeds / f"example-{example.stem}.json").write_text(example.read_text())
        if campaign.corpus_dir is not None and campaign.corpus_dir.is_dir():
            for entry in corpus.load_all(campaign.corpus_dir):
                (seeds / f"{entry.name}.json").write_text(entry.case.dumps())
        (work / "convcheck.dict").write_text(fuzzed.dictionary())
        (work / "known").write_text("\n".join(set(campaign.known) | set(campaign.found)))
        (work / "inputs").mkdir()
        command = [
            sys.executable,
            "-m",
            "convcheck._atheris_engine",
            "--revision",
            engine.revision,
            "--corpus",
            str(findings_dir),
            "--known",
            str(work / "known"),
            "--stats",
            str(work / "stats.json"),
            *(["--target", engine.target] if engine.target else []),
            *([] if engine.torch is not None else ["--no-torch"]),
            "--jobs",
            str(engine.jobs),
            "--",
            f"-max_total_time={max(1, int(seconds))}",
            f"-seed={seed + 1}",
            f"-dict={work / 'convcheck.dict'}",
            "-print_final_stats=0",
            str(work / "inputs"),
            str(seeds),
        ]
        log = work / "libfuzzer.log"
        with open(log, "w") as out:
            child = subprocess.Popen(command, stdout=out, stderr=out, **sandbox.own_session())
            try:
                child.wait(timeout=seconds + 120)
            except BaseException:
                child.kill()
                child.wait()
                raise
        stats = (
            json.loads((work / "stats.json").read_text()) if (work / "stats.json").exists() else {}
        )
        campaign.stats.cases += stats.get("cases", 0)
        if findings_dir.is_dir():
            _adopt(campaign, corpus.load_all(findings_dir), stats.get("first_found", {}))


def example_cases() -> list[Path]:
    from importlib import resources

    folder = resources.files("convcheck") / "examples"
    return sorted(Path(str(p)) for p in folder.iterdir() if p.name.endswith(".json"))


def _adopt(campaign: Campaign, entries: list[corpus.Entry], first_found: dict[str, float]) -> None:
    """The child's findings, judged again here so the campaign holds whole Findings."""
    fresh = [e for e in entries if e.key not in campaign.found and e.key not in campaign.known]
    for entry, found in zip(fresh, campaign.engine.evaluate([e.case for e in fresh]), strict=True):
        for finding in found:
            if finding.key == entry.key:
                campaign.found[finding.key] = finding
                campaign.stats.first_found[finding.key] = first_found.get(
                    finding.key, campaign.stats.elapsed
                )


ENGINES = {"random": random_engine, "hypothesis": hypothesis_engine, "atheris": atheris_engine}


def run(campaign: Campaign, engine: str, seconds: float, seed: int) -> None:
    ENGINES[engine](campaign, seconds, seed)
