"""The atheris engine: libFuzzer, coverage-guided over the model, in a child process.

``atheris.Fuzz()`` owns its process until libFuzzer exits, so the child
(``convcheck.engines._atheris_child``) runs apart; findings come back through the corpus
folder, where the child writes them the moment they are new, and are judged again here
so that the campaign holds whole ``Finding``s.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from convcheck import corpus, fuzzed, sandbox
from convcheck.campaign import example_cases

# How long past its time budget the child may take to finish its last batch.
GRACE_SECONDS = 120


def explore(campaign, seed: int) -> None:
    judges, budget = campaign.judges, campaign.budget
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
        seconds = budget.seconds
        command = [
            sys.executable,
            "-m",
            "convcheck.engines._atheris_child",
            "--revision",
            judges.revision,
            "--corpus",
            str(findings_dir),
            "--known",
            str(work / "known"),
            "--stats",
            str(work / "stats.json"),
            *(["--target", judges.target] if judges.target else []),
            *([] if judges.torch is not None else ["--no-torch"]),
            "--jobs",
            str(judges.jobs),
            *([] if budget.cases is None else ["--cases", str(campaign.room(budget.cases))]),
            *(["--until-first"] if budget.until_first else []),
            "--",
            *([] if seconds is None else [f"-max_total_time={max(1, int(seconds))}"]),
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
                child.wait(timeout=None if seconds is None else seconds + GRACE_SECONDS)
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


def _adopt(campaign, entries: list[corpus.Entry], first_found: dict[str, float]) -> None:
    """The child's findings, judged again here so the campaign holds whole Findings."""
    fresh = [e for e in entries if e.key not in campaign.found and e.key not in campaign.known]
    for entry, found in zip(fresh, campaign.judges.evaluate([e.case for e in fresh]), strict=True):
        for finding in found:
            if finding.key == entry.key:
                campaign.found[finding.key] = finding
                campaign.stats.first_found[finding.key] = first_found.get(
                    finding.key, campaign.stats.elapsed
                )
