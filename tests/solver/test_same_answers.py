"""Same answers anywhere: what the solver answers does not depend on the machine's load,
on the process that asks, or on whether the disk cache held it before.

z3's work is bounded by its own step count (``solver.limits``), never by a clock, so a
run beside CPU burners gives the report a quiet one gives; the seeds a campaign judges
first are solved whole, ahead of its budget, so a seeded case budget finds the same
bugs from a cold cache as from a warm one.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("z3")

from engine_campaign import EngineCampaign  # noqa: E402

from convcheck import engines  # noqa: E402
from convcheck.native.build import cache_dir  # noqa: E402
from convcheck.solver.seeds import seed_cases  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _convcheck(*argv: str, folder: Path, hash_seed: int = 0) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "CONVCHECK_CACHE": str(folder),
        "PYTHONPATH": str(ROOT),
        # Another hash seed: a set's order must not reach an answer either.
        "PYTHONHASHSEED": str(hash_seed),
    }
    return subprocess.run(
        [sys.executable, "-m", "convcheck", *argv], env=env, capture_output=True, text=True
    )


def _answers(stdout: str) -> dict:
    """A ``prove --json`` report without its timings and without where it came from."""
    data = json.loads(stdout)
    del data["seconds"], data["cached"]
    for site in data["sites"]:
        del site["seconds"]
    return data


def _prove(revision: str, folder: Path, hash_seed: int) -> dict:
    done = _convcheck(
        "prove", "--revision", revision, "--json", "--no-judge", "--no-cache",
        folder=folder, hash_seed=hash_seed,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    return _answers(done.stdout)


def _burners(n: int) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", "while 1: pass"]) for _ in range(n)]


@pytest.mark.slow
@pytest.mark.parametrize("revision", ["legacy", "current"])
def test_prove_gives_the_same_report_beside_cpu_burners(revision, tmp_path):
    quiet = _prove(revision, tmp_path / "quiet", hash_seed=1)
    burners = _burners(2)
    try:
        loaded = _prove(revision, tmp_path / "loaded", hash_seed=2)
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
    assert loaded == quiet
    # Not a vacuous agreement: the report holds sites, and legacy its witnesses.
    assert quiet["sites"]
    assert revision != "legacy" or any(s["witness"] for s in quiet["sites"])


def _judged_first(engine: str, revision: str, cases: int, deadline: float | None) -> list:
    # The case budget ends the campaign; the engine is told its time is all but spent.
    campaign = EngineCampaign(revision, cases, deadline)
    module = importlib.import_module(engines.ENGINES[engine].module)
    module.explore(campaign, seed=0)
    return campaign.submitted


@pytest.mark.slow  # solving current's seeds from a cold cache, twice over on main
def test_a_cold_cache_gives_the_campaign_its_solved_cases_whole(tmp_path, monkeypatch):
    """The time budget's clock cuts no solving short: a campaign whose time is nearly
    spent judges the solved cases a campaign without a time budget judges."""
    monkeypatch.setenv("CONVCHECK_CACHE", str(tmp_path))
    cases = 400
    cold = _judged_first("random", "current", cases, time.monotonic() + 0.5)
    warm = _judged_first("random", "current", cases, None)
    assert cold == warm
    assert len(seed_cases("current")) > 1  # the solved cases, then sampling


def _cold_cache(folder: Path) -> Path:
    """A cache folder with this machine's built kernels and no solver answer."""
    folder.mkdir()
    for built in cache_dir().iterdir():
        if not built.name.startswith("solver-"):
            (folder / built.name).symlink_to(built)
    return folder


def _findings(corpus: Path) -> dict[str, dict]:
    """Each entry's case, by file name (its signature's)."""
    return {p.name: json.loads(p.read_text())["case"] for p in sorted(corpus.glob("*.json"))}


@pytest.mark.slow  # solving legacy from a cold cache: a minute
@pytest.mark.parametrize("engine", ["random", "solver"])
def test_a_seeded_campaign_finds_the_same_from_a_cold_and_a_warm_cache(engine, tmp_path):
    folder = _cold_cache(tmp_path / "cache")
    argv = ["fuzz", "--revision", "legacy", "--engine", engine, "--no-torch", "--cases", "400"]
    argv += ["--seed", "3", "--jobs", "1", "--no-minimize"]
    cold = _convcheck(*argv, "--corpus", str(tmp_path / "cold"), folder=folder)
    warm = _convcheck(*argv, "--corpus", str(tmp_path / "warm"), folder=folder)
    assert (cold.returncode, warm.returncode) == (1, 1), cold.stderr + warm.stderr
    assert _findings(tmp_path / "cold") == _findings(tmp_path / "warm")
    assert _findings(tmp_path / "cold")
    # The cold run solved before its campaign began, and said so; the warm one read it.
    assert "solving" in cold.stderr
    assert "solving" not in warm.stderr
