"""Wall time of ``prove`` per revision and rank (no native judging: the solver alone), and
of the default engine's solver cases (``solver.seeds``, solved afresh, not from the cache).

    python benchmarks/bench_prove.py [--rank 3] [--revision legacy]

Prints paths, sites by status and seconds; times depend on the machine and its load.
The issue's targets: legacy under 10 s, current (every rank) under 60 s, on 2 cores.
"""

from __future__ import annotations

import argparse
import time

from convcheck.solver import prove
from convcheck.solver.explore import shapes
from convcheck.solver.seeds import solve

TARGETS = {"legacy": 10.0, "current": 60.0}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--revision", action="append", choices=("legacy", "current"))
    parser.add_argument("--rank", type=int, action="append", choices=(3, 4, 5))
    args = parser.parse_args()
    for revision in args.revision or ("legacy", "current"):
        only = [s for s in shapes(revision) if not args.rank or s.rank in args.rank]
        report = prove(revision, only=only)
        counts = {k: report.count(k) for k in ("witness", "proven", "unknown")}
        print(
            f"{revision:<8} ranks {sorted({s.rank for s in only})}: {report.paths} paths, "
            f"{len(report.sites)} sites {counts}, {report.seconds:.1f} s "
            f"({report.seconds / TARGETS[revision]:.1f}x the target)"
        )
        started = time.monotonic()
        cases, _ = solve(revision)
        took = time.monotonic() - started
        print(f"{revision:<8} default engine's cases: {len(cases)}, {took:.1f} s")


if __name__ == "__main__":
    main()
