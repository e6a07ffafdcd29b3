"""Throughput of the ExecuTorch judge: cases per second, side by side in one run.

    python benchmarks/bench_executorch.py [--cases 3000] [--budget 4]

Through the sandbox workers (persistent: each serves many cases), with 1 and 2 workers,
for three sets of generated cases (``convcheck.generate.build_case``): small cases the
legacy kernel *accepts* (each is crafted, loaded and run on real inputs, plus a second run
when a canary sits after the bias), cases it *rejects* (crafted, loaded, the call fails
in the checks), and cases too large to run whole, *probed* (two loads and calls without
data). Cases that kill the process are left out: each costs a worker restart (about a
second, importing torch), which ``convcheck.sandbox``'s tests measure, not this.

Then the costs outside the loop: importing torch and the pybindings in a fresh process,
importing ``executorch.exir`` (what the workers avoid), and one worker's start-up.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

from convcheck.generate import RandomSource
from convcheck.ops.convolution.executorch_target import ExecutorchJudge, available, expected_outcome
from convcheck.ops.convolution.executorch_target._plan import Limits, make_plan
from convcheck.ops.convolution.generate import build_case

_KILLERS = ("SIGFPE", "SIGSEGV", "SIGABRT")


def _rate(count: int, seconds: float) -> float:
    return count / seconds if seconds > 0 else float("inf")


def case_sets(count: int) -> dict[str, list]:
    """Accepted, rejected and probed cases, none that kills a worker."""
    sets: dict[str, list] = {"accepted": [], "rejected": [], "probed": []}
    seed = 0
    while min(len(v) for v in sets.values()) < count and seed < 200 * count:
        case = build_case(RandomSource(seed), small=seed % 2 == 0)
        seed += 1
        expected = expected_outcome(case)
        if expected.verdict == "crash" and expected.crash_kind in _KILLERS:
            continue
        if not make_plan(case, Limits()).whole:
            name = "probed"
        elif expected.verdict == "reject":
            name = "rejected"
        else:
            name = "accepted"  # over-reads included: accepted by the checks, run whole
        if len(sets[name]) < count:
            sets[name].append(case)
    return sets


def measure(judge: ExecutorchJudge, cases: list, budget: float) -> float:
    """Cases per second through ``judge.run``, batches of 500, for about ``budget`` s."""
    judge.run(cases[:20])  # warm: workers started, numpy and the model imported
    done, start = 0, time.perf_counter()
    while True:
        for at in range(0, len(cases), 500):
            chunk = cases[at : at + 500]
            judge.run(chunk)
            done += len(chunk)
            if time.perf_counter() - start > budget:
                return _rate(done, time.perf_counter() - start)


def _seconds(code: str) -> float:
    """Wall time of ``python -c code`` in a fresh process, minus an empty interpreter's."""

    def run(source: str) -> float:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", source], check=True, capture_output=True)
        return time.perf_counter() - start

    empty = min(run("pass") for _ in range(2))
    return min(run(code) for _ in range(2)) - empty


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=3000, help="cases per set")
    parser.add_argument("--budget", type=float, default=4.0, help="seconds per measurement")
    args = parser.parse_args()
    if not available():
        sys.exit(
            "executorch is not installed: pip install executorch==1.5.1 --no-deps "
            "flatbuffers ruamel.yaml tabulate"
        )

    sets = case_sets(args.cases)
    rates = {}
    for jobs in (1, 2):
        with ExecutorchJudge(jobs=jobs) as judge:
            for name, cases in sets.items():
                rates[name, jobs] = measure(judge, cases, args.budget)

    print(f"{ExecutorchJudge.name}: cases/s through the sandbox ({args.cases} cases per set)")
    print(f"{'cases':<10} {'1 worker':>9} {'2 workers':>10} {'2/1':>6}")
    for name in sets:
        one, two = rates[name, 1], rates[name, 2]
        print(f"{name:<10} {one:>9,.0f} {two:>10,.0f} {two / one:>6.2f}")
    print()
    print("start-up costs (fresh process, seconds):")
    costs = {
        "import torch": "import torch",
        "import torch + pybindings _C": (
            "import torch; from executorch.extension.pybindings import _C"
        ),
        "import executorch.exir": "import torch, executorch.exir",
        "worker init (torch, _C, model)": (
            "from convcheck.ops.convolution.executorch_target import worker; worker.init({})"
        ),
    }
    for name, code in costs.items():
        print(f"  {name:<32} {_seconds(code):>6.2f}")
    start = time.perf_counter()
    with ExecutorchJudge(jobs=1) as judge:
        judge.check(sets["rejected"][:1])
        print(f"  {'judge: first case (a new worker)':<32} {time.perf_counter() - start:>6.2f}")


if __name__ == "__main__":
    main()
