"""Wall and CPU time of ``prove`` per revision and rank (no native judging: the solver
alone), explored in one process and in ``--jobs`` processes, side by side, solved afresh
(cold); then the same report read from the disk cache, as ``convcheck prove`` does after
the first run of a version of the model and solver (warm); then the default engine's
solver cases (``solver.seeds``, solved afresh, not from the cache).

    python benchmarks/bench_prove.py [--rank 3] [--revision legacy] [--jobs 2] [--no-seeds]

Without ``--rank``, the ranks ``convcheck prove`` solves by default (``default_ranks``:
legacy 3, current 3 to 5): the whole runs the targets are about.

Prints paths, sites by status, wall and CPU seconds (this process and its reaped workers:
CPU time depends less on the other jobs sharing the cores than wall time does), and the
ratio of the two runs measured in this one. The issue's targets: legacy under 10 s,
current (every rank) under 60 s, on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import resource
import time

from convcheck.solver import prove
from convcheck.solver.explore import default_ranks, shapes
from convcheck.solver.prove import solved_report
from convcheck.solver.seeds import solve

TARGETS = {"legacy": 10.0, "current": 60.0}


def cpu_seconds() -> float:
    """User and system time of this process and of its children that were waited for."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def answers(report) -> dict:
    """The report without its times: the same for any number of workers."""
    data = report.to_json()
    del data["seconds"], data["cached"]
    for site in data["sites"]:
        del site["seconds"]
    return data


def measure(revision: str, only, jobs: int, cache: str = ""):
    """Solved afresh in ``jobs`` processes; ``cache`` "store": and stored, as a first
    ``convcheck prove`` of a version of the model and solver does; "read": read back, as
    every later one does."""
    load = os.getloadavg()[0]
    wall, cpu = time.monotonic(), cpu_seconds()
    if cache:
        report = solved_report(revision, only, fresh=cache == "store", jobs=jobs)
    else:
        report = prove(revision, only=only, jobs=jobs)
    wall, cpu = time.monotonic() - wall, cpu_seconds() - cpu
    counts = {k: report.count(k) for k in ("witness", "proven", "unknown")}
    how = "warm, from the cache" if report.cached else f"jobs {jobs}"
    print(
        f"{revision:<8} ranks {sorted({s.rank for s in only})}, {how}: "
        f"{report.paths} paths, {len(report.sites)} sites {counts}, "
        f"wall {wall:.1f} s ({wall / TARGETS[revision]:.1f}x the target), cpu {cpu:.1f} s, "
        f"load {load:.1f} to {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    return wall, cpu, answers(report)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--revision", action="append", choices=("legacy", "current"))
    parser.add_argument("--rank", type=int, action="append", choices=(3, 4, 5))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--no-seeds", action="store_true", help="leave the engine's cases out")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for revision in args.revision or ("legacy", "current"):
        only = shapes(revision, args.rank or default_ranks(revision))
        one_wall, one_cpu, one = measure(revision, only, 1)
        many_wall, many_cpu, many = measure(revision, only, args.jobs, cache="store")
        print(
            f"{revision:<8} jobs {args.jobs} against 1: wall {one_wall / many_wall:.2f}x faster, "
            f"cpu {many_cpu / one_cpu:.2f}x, the same report: {one == many}"
        )
        measure(revision, only, args.jobs, cache="read")
        if args.no_seeds:
            continue
        started = time.monotonic()
        cases, _ = solve(revision)
        took = time.monotonic() - started
        print(f"{revision:<8} default engine's cases: {len(cases)}, {took:.1f} s")


if __name__ == "__main__":  # the workers are spawned: they import this module again
    main()
