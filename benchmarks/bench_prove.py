"""Wall and CPU time of ``prove`` per revision and rank (no native judging: the solver
alone), explored in one process and in ``--jobs`` processes, side by side, solved afresh
(cold); then the same report read from the disk cache, as ``convcheck prove`` does after
the first run of a version of the model and solver (warm); then the default engine's
solver cases (``solver.seeds``, solved afresh, not from the cache).

    python benchmarks/bench_prove.py [--rank 3] [--revision legacy] [--jobs 2] [--no-seeds]
    python benchmarks/bench_prove.py --steps [--scale 0.5 --scale 2] [--op solvable_window]

Without ``--rank``, the ranks ``convcheck prove`` solves by default (``default_ranks``:
legacy 3, current 3 to 5): the whole runs the targets are about.

Prints paths, sites by status, wall and CPU seconds (this process and its reaped workers:
CPU time depends less on the other jobs sharing the cores than wall time does), and the
ratio of the two runs measured in this one. The issue's targets: legacy under 10 s,
current (every rank) under 60 s, on 2 cores.

``--steps`` instead counts z3's work, in one process: every check the solver makes, by
its step limit (``limits``: which tier it is), how many ran out of their steps (the
limit hit: unknown), and the most steps an answered check used. With ``--scale F``
(repeatable) every step limit is multiplied by F and the answers (statuses, paths,
witnesses) are compared with those at 1: how far the limits are from changing them.
"""

from __future__ import annotations

import argparse
import collections
import os
import resource
import sys
import time
from pathlib import Path

from convcheck import registry
from convcheck.solver import limits, prove
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


def counting(scale: float, checks: collections.Counter, most: dict):
    """``limits.solver`` and ``limits.optimizer`` with every limit times ``scale``, and
    each check counted by (limit, answer), with the most steps an answer used."""
    solver, optimizer = limits.solver, limits.optimizer

    def counted(made, rlimit: int):
        check = made.check

        def check_counted(*assumptions):
            before = made.statistics().get_key_value("rlimit count")
            answer = check(*assumptions)
            used = made.statistics().get_key_value("rlimit count") - before
            checks[(rlimit, str(answer))] += 1
            most[rlimit, str(answer)] = max(most.get((rlimit, str(answer)), 0), used)
            return answer

        made.check = check_counted
        return made

    def scaled_solver(rlimit, groebner=True, context=None):
        return counted(solver(int(rlimit * scale), groebner, context), rlimit)

    def scaled_optimizer(rlimit):
        return counted(optimizer(int(rlimit * scale)), rlimit)

    return scaled_solver, scaled_optimizer


def _apart(one: dict, other: dict) -> str:
    """Where two reports' answers differ: the sites' statuses, their paths' statuses,
    their witnesses."""
    if one == other:
        return ""
    mine = {(s["site"], s["kind"]): s for s in one["sites"]}
    theirs = {(s["site"], s["kind"]): s for s in other["sites"]}
    keys = mine.keys() | theirs.keys()

    def differ(field: str) -> int:
        return sum((mine.get(k) or {}).get(field) != (theirs.get(k) or {}).get(field) for k in keys)

    return (
        f" (sites' statuses apart: {differ('status')}, paths: {differ('paths')}, "
        f"witnesses: {differ('witness')}, paths explored {one['paths']} -> {other['paths']})"
    )


def steps(revisions, ranks, scales, op: str) -> None:
    """z3's checks by step limit at each scale, and whether the answers stay those at 1."""
    names = {v: k for k, v in vars(limits).items() if k.isupper() and isinstance(v, int)}
    names[2 * limits.QUERY] = "2 QUERY"
    names[5 * limits.QUERY] = "5 QUERY"
    plain = limits.solver, limits.optimizer
    for revision in revisions:
        only = shapes(revision, ranks or default_ranks(revision, op), op)
        at_one = None
        for scale in sorted({1.0, *scales}, key=lambda f: f != 1.0):
            checks: collections.Counter = collections.Counter()
            most: dict = {}
            limits.solver, limits.optimizer = counting(scale, checks, most)
            wall, cpu = time.monotonic(), cpu_seconds()
            try:
                report = prove(revision, only=only, jobs=1, op=op)
            finally:
                limits.solver, limits.optimizer = plain
            wall, cpu = time.monotonic() - wall, cpu_seconds() - cpu
            got = answers(report)
            at_one = at_one or got
            apart = _apart(at_one, got)
            counts = {k: report.count(k) for k in ("witness", "proven", "unknown")}
            ran_out = sum(n for (_, answer), n in checks.items() if answer == "unknown")
            print(
                f"{op} {revision:<8} steps x{scale:g}: {sum(checks.values())} checks, "
                f"{ran_out} ran out of steps; sites {counts}; the answers at x1: "
                f"{got == at_one}{apart}; wall {wall:.1f} s, cpu {cpu:.1f} s",
                flush=True,
            )
            if scale == 1.0:
                for rlimit in sorted({r for r, _ in checks}):
                    by = {a: checks[rlimit, a] for a in ("sat", "unsat", "unknown")}
                    used = {a: most.get((rlimit, a), 0) for a in ("sat", "unsat")}
                    print(
                        f"    {names.get(rlimit, rlimit)} ({rlimit:,} steps): {by}, "
                        f"most used: {used}"
                    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--revision", action="append", choices=("legacy", "current"))
    parser.add_argument("--rank", type=int, action="append", choices=(3, 4, 5))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--no-seeds", action="store_true", help="leave the engine's cases out")
    parser.add_argument("--steps", action="store_true", help="count z3's checks and steps")
    parser.add_argument("--scale", type=float, action="append", default=[])
    parser.add_argument("--op", default=registry.DEFAULT_OP)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    if args.op != registry.DEFAULT_OP:  # the toy op of tests/solver
        sys.path[:0] = [str(Path(__file__).parents[1] / "tests" / d) for d in ("ops", "solver")]
        registry.register("window", "window_op:OP")
        registry.register(args.op, f"{args.op}:OP")
    if args.steps:
        steps(args.revision or ("legacy", "current"), args.rank, args.scale, args.op)
        return
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
