"""Campaign speed, measured side by side in one run (the machine is shared and noisy).

1. Cases/s of the pipeline on 2 cores, judge by judge: model alone, + native, + torch.
2. Time to first find of each legacy bug class, per engine (random, hypothesis, atheris),
   median over seeds.

    python benchmarks/bench_campaign.py [--seconds 20] [--seeds 3] [--engines random,atheris]
"""

from __future__ import annotations

import argparse
import statistics
import time

from convcheck import campaign
from convcheck.generate import RandomSource, build_case
from convcheck.judges import Judges
from convcheck.known_bugs import LEGACY_BUG_CLASSES


def throughput(seconds: float) -> None:
    """As a campaign judges: fresh cases every batch, known crashes confirmed, then spared."""
    print("== pipeline throughput, legacy, jobs=2, batches of 256, fresh cases")
    rows = []
    for label, native, torch in (
        ("model (C + exact)", False, False),
        ("+ native", True, False),
        ("+ native + torch", True, True),
    ):
        src = RandomSource(99)
        with Judges("legacy", jobs=2, use_native=native, use_torch=torch) as judges:
            judges.evaluate([build_case(src) for _ in range(8)])  # start the workers
            done, start = 0, time.monotonic()
            while time.monotonic() - start < seconds:
                judges.evaluate([build_case(src) for _ in range(256)], thrifty=True)
                done += 256
            rows.append((label, done / (time.monotonic() - start)))
    base = rows[0][1]
    for label, rate in rows:
        print(f"  {label:<20} {rate:>10,.0f} cases/s   {rate / base:6.3f} x model alone")


def first_finds(engines: list[str], seconds: float, seeds: int) -> None:
    print(f"== time to first find per legacy bug class ({seconds:.0f} s runs, median of {seeds})")
    times: dict[str, dict[str, list[float]]] = {
        e: {b: [] for b in LEGACY_BUG_CLASSES} for e in engines
    }
    for engine_name in engines:
        for seed in range(seeds):
            with Judges("legacy", jobs=2) as judges:
                run = campaign.Campaign(judges, budget=campaign.Budget(seconds=seconds))
                run.explore(engine_name, seed)
            for bug, signatures in LEGACY_BUG_CLASSES.items():
                hits = [
                    run.stats.first_found[f.key]
                    for f in run.found.values()
                    if f.signature in signatures
                ]
                times[engine_name][bug].append(min(hits) if hits else float("inf"))
    print(f"  {'bug class':<46}" + "".join(f"{e:>12}" for e in engines))
    for bug in LEGACY_BUG_CLASSES:
        cells = []
        for e in engines:
            median = statistics.median(times[e][bug])
            cells.append("   not found" if median == float("inf") else f"{median:>11.1f}s")
        print(f"  {bug:<46}" + "".join(cells))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--engines", default="random,hypothesis,atheris")
    args = parser.parse_args()
    throughput(min(args.seconds, 10.0))
    first_finds(args.engines.split(","), args.seconds, args.seeds)


if __name__ == "__main__":
    main()
