"""The atheris engine: libFuzzer, coverage-guided over the model, in a child process.

``atheris.Fuzz()`` owns its process until libFuzzer exits, so the child
(``convcheck.engines._atheris_child``) runs apart; findings come back through the corpus
folder, where the child writes them the moment they are new, and are judged again here
so that the campaign holds whole ``Finding``s.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from convcheck import corpus, files, fuzzed, registry, sandbox
from convcheck.case import Case
from convcheck.errors import ConvcheckError

if TYPE_CHECKING:
    from convcheck.campaign import Campaign

# How long past the campaign's deadline the child may take to write its last finding
# (its own batches stop at the deadline).
GRACE_SECONDS = 3
# How often the parent reads the child's counts for the progress display.
PROGRESS_SECONDS = 0.5
# libFuzzer's output, kept in the corpus folder (git ignores it there).
LOG_NAME = "libfuzzer.log"
SLOW_UNIT_SECONDS = 10**6


def explore(campaign: Campaign, seed: int) -> None:
    judges, budget = campaign.judges, campaign.budget
    with sandbox.private_temporary_directory("convcheck-atheris-") as tmp:
        work = Path(tmp)
        findings_dir = campaign.corpus_dir or work / "findings"
        seeds = work / "seeds"
        seeds.mkdir()
        # Seeds: the op's valid calls, which show no finding (the bundled examples are the
        # thread's reproducers: seeded with them, libFuzzer would replay bugs, not find
        # them), and the campaign's own corpus.
        for i, case in enumerate(registry.get(judges.op).valid_cases()):
            (seeds / f"valid-{i}.json").write_text(case.dumps())
        if campaign.corpus_dir is not None and campaign.corpus_dir.is_dir():
            for entry in corpus.load_all(campaign.corpus_dir):
                (seeds / f"{entry.name}.json").write_text(entry.case.dumps())
        (work / "convcheck.dict").write_text(fuzzed.dictionary(judges.op))
        (work / "known").write_text("\n".join(set(campaign.known) | set(campaign.found)))
        (work / "inputs").mkdir()
        reading = []
        if judges.ids.check_map is not None:
            (work / "check-map.json").write_text(json.dumps(judges.ids.check_map.exact))
            reading = ["--check-map", str(work / "check-map.json")]
        if campaign.torch_dir is not None:
            reading += ["--torch-bugs", str(campaign.torch_dir)]
        log = log_path(campaign, work)
        command = [
            sys.executable,
            "-m",
            "convcheck.engines._atheris_child",
            "--revision",
            judges.revision,
            "--op",
            judges.op,
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
            "--started",
            repr(campaign.stats.started),
            *([] if budget.cases is None else ["--cases", str(campaign.room(budget.cases))]),
            *(["--until-first"] if budget.until_first else []),
            "--",
            *([] if budget.seconds is None else [f"-max_total_time={max(1, int(budget.seconds))}"]),
            f"-seed={seed + 1}",
            f"-dict={work / 'convcheck.dict'}",
            "-print_final_stats=0",
            # libFuzzer rereads its corpus folder every second by default and runs what
            # it wrote there since, so a case budget's inputs would follow the clock.
            "-reload=0",
            # One call judges a whole batch, so libFuzzer's "slow unit" is no finding; a
            # harness's crash input is kept beside the log, never in the working folder.
            f"-report_slow_units={SLOW_UNIT_SECONDS}",
            f"-artifact_prefix={log.parent}/libfuzzer-",
            str(work / "inputs"),
            str(seeds),
        ]
        with open(log, "w") as out:
            # The child's string hashes follow the seed: the model iterates over sets of
            # names, and each comparison on the way feeds libFuzzer's table of recent
            # comparisons, which steers its mutations.
            env = {**os.environ, "PYTHONHASHSEED": str(seed % 2**32)}
            child = subprocess.Popen(
                command, stdout=out, stderr=out, env=env, **sandbox.own_session()
            )
            try:
                _wait(child, campaign, work / "stats.json")
            finally:
                child.kill()
                child.wait()
        error = work / "error"
        if error.is_file():
            raise ConvcheckError(
                f"the atheris engine's child stopped: {error.read_text()} "
                f"(libFuzzer's log: {files.shown(log)})"
            )
        if judges.stopped:
            # A signal: the child has written what it found to the corpus folder already;
            # the stopped judges can judge nothing more here.
            return
        stats = _read_stats(work / "stats.json")
        campaign.stats.cases += stats.get("cases", 0)
        met_again = stats.get("met_again", {}).items()
        cases = {key: registry.case_from_json(case, judges.op) for key, case in met_again}
        if findings_dir.is_dir():
            for entry in corpus.load_all(findings_dir, campaign.torch_dir):
                cases.setdefault(entry.key, entry.case)
        _adopt(campaign, cases, stats.get("first_found", {}))


def log_path(campaign, work: Path) -> Path:
    """libFuzzer's own log (its coverage lines, a harness's traceback) beside the findings,
    where a person looks after a campaign; only a campaign without a corpus loses it."""
    if campaign.corpus_dir is None:
        return work / LOG_NAME
    return files.folder(campaign.corpus_dir, "corpus folder") / LOG_NAME


def _read_stats(path: Path) -> dict:
    """The child's counts; it replaces the file atomically, so it is whole or absent."""
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return {}


def _wait(child: subprocess.Popen, campaign, stats: Path) -> None:
    """Until the child ends, the judges are stopped (a signal: the child, in a session of
    its own, does not get it), or the deadline has passed by the grace time; meanwhile
    the campaign's progress shows the child's counts."""
    judges, deadline = campaign.judges, campaign.deadline
    shown = 0.0
    while child.poll() is None and not judges.stopped:
        now = time.monotonic()
        if deadline is not None and now > deadline + GRACE_SECONDS:
            return
        if campaign.progress is not None and now - shown >= PROGRESS_SECONDS:
            shown = now
            counts = _read_stats(stats)
            keys = set(counts.get("first_found", {})) | set(campaign.found)
            kinds = Counter(key.split(" | ")[0] for key in keys)  # a signature's kind first
            cases = campaign.stats.cases + counts.get("cases", 0)
            campaign.progress(cases, campaign.stats.elapsed, kinds, "")
        time.sleep(0.05)


def _adopt(campaign, cases: dict[str, Case], first_found: dict[str, float]) -> None:
    """The child's findings, judged again here so the campaign holds whole Findings: the
    new ones, and the known ones it met again (``first_found`` has them), which the
    report shows as known, as it does for every engine. ``cases``: a case of each."""
    fresh = [
        (key, case)
        for key, case in cases.items()
        if key not in campaign.found and (key not in campaign.known or key in first_found)
    ]
    judged = campaign.judges.evaluate([case for _, case in fresh])
    for (key, _), found in zip(fresh, judged, strict=True):
        for finding in found:
            if finding.key == key:
                campaign.found[key] = finding
                campaign.stats.first_found[key] = first_found.get(key, campaign.stats.elapsed)
