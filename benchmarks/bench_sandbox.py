"""Requests per second through a WorkerPool, measured side by side in one run.

Run: ``python benchmarks/bench_sandbox.py``. Prints:

1. with a trivial handler, one row per job count, one column per batch size: the
   per-request cost of the sandbox itself (pipes, JSON, the poll loop);
2. crash restarts: requests/s when 30% of them crash the worker (SIGSEGV), for workers
   started afresh after each crash and for workers forked by the fork server, beside the
   rate without crashes; then the same with the sanitized legacy kernel (NativeJudge),
   whose crashes are sanitizer reports, on a mix of generated cases 30% of which crash.

The machine may be shared: compare the columns of one run, not runs.
"""

import dataclasses
import sys
import time
from pathlib import Path

# Workers import the handler with the parent's sys.path: make this file importable.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from convcheck.sandbox import WorkerPool, WorkerSpec

HANDLER = f"{Path(__file__).stem}:echo"
BATCH_SIZES = (1, 1000)
JOBS = (1, 2)
SECONDS = 1.0  # per measurement
CRASH_SHARE = 0.3


def echo(request: dict) -> dict:
    if request.get("crash"):
        import ctypes

        ctypes.string_at(0)  # SIGSEGV
    return request


def requests_per_second(pool: WorkerPool, batch: list[dict]) -> float:
    pool.run(batch[:2])  # start the workers outside the clock
    done = 0
    start = time.perf_counter()
    while time.perf_counter() - start < SECONDS:
        done += len(pool.run(batch))
    return done / (time.perf_counter() - start)


def sandbox_cost() -> None:
    print(f"{'jobs':>4}" + "".join(f"{f'batch {size}':>14}" for size in BATCH_SIZES))
    for jobs in JOBS:
        with WorkerPool(WorkerSpec(handler=HANDLER), jobs=jobs) as pool:
            rates = [
                requests_per_second(pool, [{"index": i} for i in range(size)])
                for size in BATCH_SIZES
            ]
        print(f"{jobs:>4}" + "".join(f"{rate:>12,.0f}/s" for rate in rates))


def _mix(crashing: list, clean: list, count: int) -> list:
    """``count`` items, every tenth-in-ten pattern with CRASH_SHARE of them crashing."""
    per_ten = round(CRASH_SHARE * 10)
    return [
        crashing[i % len(crashing)] if i % 10 < per_ten else clean[i % len(clean)]
        for i in range(count)
    ]


def crash_restarts() -> None:
    spec = WorkerSpec(handler=HANDLER)
    clean = [{"index": i} for i in range(1000)]
    mixed = _mix([{"crash": True}], clean, 1000)
    rows = []
    for label, fork_server in (("started", False), ("fork server", True)):
        with WorkerPool(dataclasses.replace(spec, fork_server=fork_server), jobs=2) as pool:
            rows.append((label, requests_per_second(pool, clean), requests_per_second(pool, mixed)))
    _print_rows("Python handler, SIGSEGV", rows)
    rows = []
    crashing, clean = _legacy_cases()
    mixed = _mix(crashing, clean, 1000)
    from convcheck.native import NativeJudge

    for label, fork_server in (("started", False), ("fork server", True)):
        with NativeJudge("legacy", jobs=2, fork_server=fork_server) as judge:
            judge.check(clean[:2])
            rows.append((label, _judge_rate(judge, clean), _judge_rate(judge, mixed)))
    _print_rows("sanitized legacy kernel, check entry", rows)


def _judge_rate(judge, cases: list) -> float:
    done, start = 0, time.perf_counter()
    while time.perf_counter() - start < SECONDS * 3:
        for at in range(0, len(cases), 100):
            done += len(judge.check(cases[at : at + 100]))
            if time.perf_counter() - start > SECONDS * 3:
                break
    return done / (time.perf_counter() - start)


def _legacy_cases() -> tuple[list, list]:
    """Generated cases on which the legacy kernel crashes (the model says so), and not."""
    from convcheck import model
    from convcheck.generate import RandomSource, build_case

    src = RandomSource(1)
    crashing, clean = [], []
    while len(crashing) < 100 or len(clean) < 1000:
        case = build_case(src, small=True)
        verdict = model.predict(model.run(case, "legacy"), with_loops=False).verdict
        (crashing if verdict == "crash" else clean).append(case)
    return crashing[:100], clean[:1000]


def _print_rows(title: str, rows: list) -> None:
    share = f"{CRASH_SHARE:.0%} crash"
    print(f"{title}, 2 jobs:")
    print(f"  {'workers':<12} {'no crash/s':>11} {share + '/s':>14} {'ratio':>7}")
    for label, clean, mixed in rows:
        print(f"  {label:<12} {clean:>11,.0f} {mixed:>14,.0f} {mixed / clean:>7.3f}")
    (_, _, started), (_, _, forked) = rows
    print(f"  fork server / started, {share}: {forked / started:.1f}x")


def main() -> None:
    sandbox_cost()
    print()
    crash_restarts()


if __name__ == "__main__":
    main()
