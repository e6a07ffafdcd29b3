"""Requests per second through a WorkerPool, measured side by side in one run.

Run: ``python benchmarks/bench_sandbox.py [PART ...]``, PART one of ``sandbox``,
``restarts``, ``check``, ``run``, ``asan`` (default: all). Prints:

1. with a trivial handler, one row per job count, one column per batch size: the
   per-request cost of the sandbox itself (pipes, JSON, the poll loop);
2. crash restarts: requests/s when 30% of them crash the worker (SIGSEGV), for workers
   started afresh after each crash and for workers forked by the fork server, beside the
   rate without crashes; then the same with the sanitized legacy kernel (NativeJudge),
   whose crashes are sanitizer reports, on a mix of generated cases 30% of which crash:
   the check entry (UBSan reports) and the run entry (mostly ASan heap-buffer-overflow
   reports), each with convolution's Python worker
   (``convcheck/ops/convolution/native/worker.py``) and the C worker (``worker_main.c``),
   started or forked. For those, also the cost of one crash: wall ms, and CPU ms of every
   process (parent, workers, fork server) beyond what as many clean cases cost; then the C
   worker's fork server under ASAN_OPTIONS variants.

The machine may be shared: compare the columns of one run, not runs; the CPU columns are
the ones that a loaded machine disturbs least (``uptime`` is printed).
"""

import dataclasses
import os
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
    """The Python handler's rows."""
    spec = WorkerSpec(handler=HANDLER)
    clean = [{"index": i} for i in range(1000)]
    mixed = _mix([{"crash": True}], clean, 1000)
    rows = []
    for label, fork_server in (("started", False), ("fork server", True)):
        with WorkerPool(dataclasses.replace(spec, fork_server=fork_server), jobs=2) as pool:
            rows.append((label, requests_per_second(pool, clean), requests_per_second(pool, mixed)))
    _print_rows("Python handler, SIGSEGV", rows)


# (label, fork_server, c_worker): the first is what the others are compared with.
WORKERS = (
    ("Python, started", False, False),
    ("Python, fork server", True, False),
    ("C, started", False, True),
    ("C, fork server", True, True),
)


def kernel_crashes(mode: str) -> None:
    crashing, clean = _legacy_cases(mode)
    mixed = _mix(crashing, clean, 1000)
    rows = [
        (label, *_crash_cost(mode, clean, mixed, fork_server, c_worker))
        for label, fork_server, c_worker in WORKERS
    ]
    _print_cost_rows(f"sanitized legacy kernel, {mode} entry", rows)


def asan_variants() -> None:
    crashing, clean = _legacy_cases("run")
    mixed = _mix(crashing, clean, 1000)
    from convcheck.native import judge

    given = judge._worker_env
    rows = []
    for options in ASAN_VARIANTS:
        judge._worker_env = _asan_options_added(given, options)
        try:
            rows.append((options or "(as set)", *_crash_cost("run", clean, mixed, True, True)))
        finally:
            judge._worker_env = given
    _print_cost_rows("C worker's fork server, run entry, added to ASAN_OPTIONS", rows)


def _asan_options_added(worker_env, options: str):
    def added(*args: object) -> dict:
        env = worker_env(*args)
        if options:
            env["ASAN_OPTIONS"] += ":" + options
        return env

    return added


# Added to the workers' ASAN_OPTIONS (the last value of an option wins): ASan's defaults
# for what the native judge sets.
ASAN_VARIANTS = ("", "malloc_context_size=30", "symbolize=1:malloc_context_size=30")


def _cpu_seconds(judge) -> float:
    """CPU time so far of this process, its reaped children (the workers) and the fork
    server, if one is up."""
    times = os.times()
    total = times.user + times.system + times.children_user + times.children_system
    for server in judge._pool._servers:
        with open(f"/proc/{server.process.pid}/stat") as stat:
            fields = stat.read().rpartition(")")[2].split()
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def _crash_cost(mode: str, clean: list, mixed: list, fork_server: bool, c_worker: bool) -> tuple:
    """Cases/s on ``clean`` and on ``mixed``; ms of wall and of CPU per crash beyond a clean
    case's."""
    from convcheck.native import NativeJudge

    with NativeJudge("legacy", jobs=2, fork_server=fork_server, c_worker=c_worker) as judge:
        judge.check(clean[:2])
        clean_rate, clean_cpu, _ = _judge_rate(judge, clean, mode)
        mixed_rate, mixed_cpu, crashes = _judge_rate(judge, mixed, mode)
    done = crashes / CRASH_SHARE
    wall_ms = (1 / mixed_rate - 1 / clean_rate) * done / crashes * 1000
    cpu_ms = (mixed_cpu - clean_cpu) * done / crashes * 1000
    return clean_rate, mixed_rate, wall_ms, cpu_ms


def _judge_rate(judge, cases: list, mode: str = "check") -> tuple[float, float, int]:
    """Cases/s, CPU seconds per case and the number of crashes, over SECONDS * 2."""
    judge_cases = judge.check if mode == "check" else judge.run
    judge_cases(cases[:2])
    done = crashes = 0
    cpu, start = _cpu_seconds(judge), time.perf_counter()
    while time.perf_counter() - start < SECONDS * 2:
        for at in range(0, len(cases), 100):
            outcomes = judge_cases(cases[at : at + 100])
            done += len(outcomes)
            crashes += sum(outcome.verdict == "crash" for outcome in outcomes)
            if time.perf_counter() - start > SECONDS * 2:
                break
    seconds = time.perf_counter() - start
    return done / seconds, (_cpu_seconds(judge) - cpu) / done, crashes


def _legacy_cases(mode: str = "check") -> tuple[list, list]:
    """Generated cases on which the legacy kernel's ``mode`` entry crashes (the model says
    so), and not."""
    from convcheck import model
    from convcheck.generate import RandomSource
    from convcheck.ops.convolution.generate import build_case

    src = RandomSource(1)
    crashing, clean = [], []
    while len(crashing) < 100 or len(clean) < 1000:
        case = build_case(src, small=True)
        verdict = model.predict(model.run(case, "legacy"), with_loops=mode == "run").verdict
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


def _print_cost_rows(title: str, rows: list) -> None:
    share = f"{CRASH_SHARE:.0%} crash"
    width = max(len(row[0]) for row in rows)
    print(f"{title}, 2 jobs, load {os.getloadavg()[0]:.1f}:")
    print(
        f"  {'':<{width}} {'no crash/s':>11} {share + '/s':>14} {'ratio':>7}"
        f" {'wall ms/crash':>14} {'CPU ms/crash':>13}"
    )
    for label, clean, mixed, wall_ms, cpu_ms in rows:
        print(
            f"  {label:<{width}} {clean:>11,.0f} {mixed:>14,.0f} {mixed / clean:>7.3f}"
            f" {wall_ms:>14.1f} {cpu_ms:>13.1f}"
        )
    for label, _, mixed, _, _ in rows[1:]:
        print(f"  {label} / {rows[0][0]}, {share}: {mixed / rows[0][2]:.2f}x")


PARTS = {
    "sandbox": sandbox_cost,
    "restarts": crash_restarts,
    "check": lambda: kernel_crashes("check"),
    "run": lambda: kernel_crashes("run"),
    "asan": asan_variants,
}


def main() -> None:
    parts = sys.argv[1:] or list(PARTS)
    unknown = [part for part in parts if part not in PARTS]
    if unknown:
        sys.exit(f"bench_sandbox.py: unknown part {unknown[0]!r} (known: {', '.join(PARTS)})")
    for at, part in enumerate(parts):
        if at:
            print()
        PARTS[part]()


if __name__ == "__main__":
    main()
