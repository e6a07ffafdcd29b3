"""Campaign speed, measured side by side in one run (the machine is shared and noisy).

1. Cases/s of the pipeline on 2 cores, judge by judge: model alone, + native, + torch,
   and + torch without reusing the oneDNN-on answer for oneDNN off (what it cost before);
   then the full pipeline with ``--jobs 2`` against ``--jobs 1``.
2. Minimising: the seconds each finding of a seeded legacy campaign took to shrink.
3. ``convcheck judge case.json``: wall time of a warm run (the second of two).

Time to the first finding of each bug class, engine by engine, is
``bench_first_finding.py``.

    python benchmarks/bench_campaign.py [--seconds 10] [--revision current]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections import Counter

from convcheck.campaign import Budget, Campaign, example_cases
from convcheck.generate import RandomSource, build_case
from convcheck.judges import Judges


def rate(revision: str, seconds: float, jobs=2, native=True, torch=True, reuse=True) -> float:
    """Cases/s as a campaign judges: fresh cases every batch, known crashes confirmed, then
    spared."""
    src = RandomSource(99)
    with Judges(revision, jobs=jobs, use_native=native, use_torch=torch) as judges:
        if judges.torch is not None:
            judges.torch.reuse_without_onednn = reuse
        judges.evaluate([build_case(src) for _ in range(8)])  # start the workers
        confirmed, done, start = Counter(), 0, time.monotonic()
        while time.monotonic() - start < seconds:
            judges.evaluate([build_case(src) for _ in range(256)], thrifty=confirmed)
            done += 256
        return done / (time.monotonic() - start)


def throughput(seconds: float, revision: str) -> None:
    print(f"== pipeline throughput, {revision}, jobs=2, batches of 256, fresh cases")
    rows = [
        ("model (C + exact)", rate(revision, seconds, native=False, torch=False)),
        ("+ native", rate(revision, seconds, torch=False)),
        ("+ native + torch", rate(revision, seconds)),
        ("  oneDNN off rerun", rate(revision, seconds, reuse=False)),
    ]
    base = rows[0][1]
    for label, speed in rows:
        print(f"  {label:<20} {speed:>10,.0f} cases/s   {speed / base:6.3f} x model alone")


def jobs_scaling(seconds: float, revision: str, pairs: int = 3) -> None:
    """The full pipeline with one worker per judge and with two, in interleaved pairs so
    that a change in the machine's load falls on both."""
    print(f"== --jobs 2 against --jobs 1, full pipeline, {revision}, {pairs} interleaved pairs")
    ratios = []
    for _ in range(pairs):
        one, two = rate(revision, seconds, jobs=1), rate(revision, seconds, jobs=2)
        ratios.append(two / one)
        print(f"  jobs 1 {one:>8,.0f} cases/s   jobs 2 {two:>8,.0f} cases/s   {two / one:5.2f} x")
    print(f"  median {statistics.median(ratios):.2f} x")


def minimising(cases: int) -> None:
    print(f"== minimising: legacy, random engine, {cases:,} cases, seed 1, jobs=2")
    with Judges("legacy", jobs=2) as judges:
        run = Campaign(judges, budget=Budget(cases=cases))
        run.explore("random", 1)
        start = time.monotonic()
        run.minimize_all(seconds=60.0)
        total = time.monotonic() - start
    spent = sorted(run.minimize_seconds.values())
    median = statistics.median(spent)
    print(
        f"  {len(spent)} findings minimised in {total:.1f} s: median {median:.2f} s, "
        f"max {spent[-1]:.2f} s (torch's own bugs left as found: "
        f"{sum(not f.about_kernel for f in run.found.values())})"
    )


def judge_wall() -> None:
    example = str(example_cases()[0])
    command = [sys.executable, "-m", "convcheck", "judge", "--revision", "legacy", example]
    walls = []
    for _ in range(2):
        start = time.monotonic()
        subprocess.run(command, capture_output=True, check=False)
        walls.append(time.monotonic() - start)
    name = example.rsplit("/", 1)[-1]
    print(f"== convcheck judge {name}: cold {walls[0]:.2f} s, warm {walls[1]:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--revision", default="current")
    parser.add_argument("--cases", type=int, default=2000, help="the minimising campaign's")
    args = parser.parse_args()
    throughput(args.seconds, args.revision)
    jobs_scaling(args.seconds, args.revision)
    minimising(args.cases)
    judge_wall()


if __name__ == "__main__":
    main()
