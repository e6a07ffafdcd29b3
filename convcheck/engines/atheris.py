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
import time
from pathlib import Path

from convcheck import corpus, fuzzed, sandbox
from convcheck.campaign import example_cases
from convcheck.errors import ConvcheckError

# How long past the campaign's deadline the child may take to write its last finding
# (its own batches stop at the deadline).
GRACE_SECONDS = 3


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
        reading = []
        if judges.ids.check_map is not None:
            (work / "check-map.json").write_text(json.dumps(judges.ids.check_map.exact))
            reading = ["--check-map", str(work / "check-map.json")]
        if campaign.torch_dir is not None:
            reading += ["--torch-bugs", str(campaign.torch_dir)]
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
            "--error",
            str(work / "error"),
            *(["--target", judges.target] if judges.target else []),
            *([] if judges.torch is not None else ["--no-torch"]),
            *reading,
            "--compare",
            judges.ids.compare,
            "--jobs",
            str(judges.jobs),
            *([] if campaign.deadline is None else ["--until", repr(campaign.deadline)]),
            *([] if budget.cases is None else ["--cases", str(campaign.room(budget.cases))]),
            *(["--until-first"] if budget.until_first else []),
            "--",
            *([] if budget.seconds is None else [f"-max_total_time={max(1, int(budget.seconds))}"]),
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
                _wait(child, judges, campaign.deadline)
            finally:
                child.kill()
                child.wait()
        error = work / "error"
        if error.is_file():
            raise ConvcheckError(f"the atheris engine's child stopped: {error.read_text()}")
        if judges.stopped:
            # A signal: the child has written what it found to the corpus folder already;
            # the stopped judges can judge nothing more here.
            return
        stats = (
            json.loads((work / "stats.json").read_text()) if (work / "stats.json").exists() else {}
        )
        campaign.stats.cases += stats.get("cases", 0)
        if findings_dir.is_dir():
            found = corpus.load_all(findings_dir, campaign.torch_dir)
            _adopt(campaign, found, stats.get("first_found", {}))


def _wait(child: subprocess.Popen, judges, deadline: float | None) -> None:
    """Until the child ends, the judges are stopped (a signal: the child, in a session of
    its own, does not get it), or the deadline has passed by the grace time."""
    while child.poll() is None and not judges.stopped:
        if deadline is not None and time.monotonic() > deadline + GRACE_SECONDS:
            return
        time.sleep(0.05)


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
