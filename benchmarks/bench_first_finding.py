"""Time to the first finding of each legacy bug class, engine by engine (benchmarks/README.md).

Every engine runs the same seeds (0, 1, ...) on ``legacy`` with fresh judges (worker
start-up counts, as it does for a user), none of them seeded with a bug's reproducer
(atheris starts from the op's valid calls: ``Op.valid_cases``). A run ends at its time
budget or once every class is found. A cell is the median over the seeds, a seed that
did not find the class counting as never; ``k/n`` says in how many it did.

    python benchmarks/bench_first_finding.py [--seeds 10] [--seconds 20]
        [--engines random,hypothesis,atheris,solver] [--markdown]

The machine is shared and has 2 cores: run it when it is quiet, and read the times as
orders of magnitude.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

from convcheck import engines
from convcheck.campaign import Budget, Campaign
from convcheck.judges import Judges
from convcheck.ops.convolution.known_bugs import LEGACY_BUG_CLASSES, bug_class


class _UntilAllClasses(Campaign):
    """A campaign that also ends once it has found every legacy bug class."""

    @property
    def exhausted(self) -> bool:
        return super().exhausted or len(found_classes(self)) == len(LEGACY_BUG_CLASSES)


def found_classes(run: Campaign) -> dict[str, float]:
    """Each bug class the run found, and when it first found it (seconds)."""
    first: dict[str, float] = {}
    for key, finding in run.found.items():
        name = bug_class(finding.signature)
        when = run.stats.first_found.get(key)
        if name is not None and when is not None:
            first[name] = min(when, first.get(name, math.inf))
    return first


def first_findings(engine: str, seed: int, seconds: float) -> dict[str, float]:
    with Judges("legacy", jobs=2) as judges:
        run = _UntilAllClasses(judges, budget=Budget(seconds=seconds))
        run.explore(engines.load(engine), seed)
    return found_classes(run)


def cell(times: list[float], markdown: bool) -> str:
    found = sum(math.isfinite(t) for t in times)
    median = statistics.median(times)
    text = "-" if math.isinf(median) else f"{median:.1f} s"
    return f"{text} ({found}/{len(times)})" if markdown else f"{text} {found}/{len(times)}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--engines", default=",".join(engines.names()))
    parser.add_argument("--markdown", action="store_true", help="a Markdown table")
    args = parser.parse_args()
    chosen = [e for e in args.engines.split(",") if not engines.unavailable(e)]
    times = {e: {name: [] for name in LEGACY_BUG_CLASSES} for e in chosen}
    for engine in chosen:
        for seed in range(args.seeds):
            began = time.monotonic()
            first = first_findings(engine, seed, args.seconds)
            for name in LEGACY_BUG_CLASSES:
                times[engine][name].append(first.get(name, math.inf))
            print(
                f"  {engine} seed {seed}: {len(first)}/{len(LEGACY_BUG_CLASSES)} classes "
                f"in {time.monotonic() - began:.1f} s",
                flush=True,
            )
    header = (
        f"median time to first finding, legacy, {args.seeds} seeds of {args.seconds:.0f} s, "
        "jobs 2 (found in k of n seeds)"
    )
    if args.markdown:
        print(f"\n| bug class ({header}) | " + " | ".join(chosen) + " |")
        print("|---|" + "---|" * len(chosen))
        for name in LEGACY_BUG_CLASSES:
            print(f"| {name} | " + " | ".join(cell(times[e][name], True) for e in chosen) + " |")
    else:
        print(f"\n{header}")
        print(f"  {'bug class':<44}" + "".join(f"{e:>16}" for e in chosen))
        for name in LEGACY_BUG_CLASSES:
            print(f"  {name:<44}" + "".join(f"{cell(times[e][name], False):>16}" for e in chosen))


if __name__ == "__main__":
    main()
