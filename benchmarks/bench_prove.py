"""Wall time of ``prove`` per revision and rank (no native judging: the solver alone).

    python benchmarks/bench_prove.py [--rank 3] [--revision legacy]

Prints paths, sites by status and seconds; times depend on the machine and its load.
"""

from __future__ import annotations

import argparse

from convcheck.solver import prove
from convcheck.solver.explore import shapes


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
            f"{len(report.sites)} sites {counts}, {report.seconds:.1f} s"
        )


if __name__ == "__main__":
    main()
