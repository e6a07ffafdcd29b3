"""CPU per judged case, stage by stage, on one fixed seeded list of generated cases.

A campaign's rate follows the machine's load; the CPU a stage costs per case barely does.
Each stage runs in this process, on this thread, over the same cases, best of ``--repeat``
(thread CPU time, so other threads and processes do not count): generation, the model
(C and exact), torch's check path as a campaign runs it (oneDNN on, off where it matters,
the real calls' thread count), the native judge's request records, the findings on every
judge's foreseen answers; then the same cases in batches through ``Judges`` (model,
native, torch, findings) with the CPU of its workers.

To compare two versions of the code, run this in each one's tree, alternating, on the
same seed: the stages are the same work on the same cases.

    python benchmarks/bench_percase.py [--cases 4000] [--seed 99] [--revision current]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_torch import _cpu  # noqa: E402  (this folder: the script's own)

from convcheck import model  # noqa: E402
from convcheck.generate import RandomSource  # noqa: E402
from convcheck.ops.convolution.generate import build_case  # noqa: E402


def _best(stage, cases, repeat: int) -> float:
    """Microseconds of this thread's CPU per case, the best of ``repeat`` passes."""
    best = float("inf")
    for _ in range(repeat):
        start = time.thread_time()
        for case in cases:
            stage(case)
        best = min(best, time.thread_time() - start)
    return best / len(cases) * 1e6


def stages(count: int, seed: int, revision: str, repeat: int) -> None:
    from convcheck.judges import Judges
    from convcheck.native import wire
    from convcheck.ops.convolution.torch_oracle import TorchJudge, _is_small
    from convcheck.ops.convolution.torch_oracle._worker import encode_case
    from convcheck.outcome import ACCEPT

    src = RandomSource(seed)
    start = time.thread_time()
    cases = [build_case(src) for _ in range(count)]
    generation = (time.thread_time() - start) / count * 1e6
    torch = TorchJudge(jobs=1)

    def torch_checks(case) -> None:
        """What ``TorchJudge.start`` does in this process (a campaign's way: rejected
        calls are not run), and the checks' verdict."""
        checked = torch._check_both(case)
        if _is_small(case, checked) and any(r.outcome.verdict == ACCEPT for r in checked):
            torch._call_threads(case, checked)
            encode_case(case)
        torch._checks_verdict(*checked)

    torch_checks(cases[0])  # torch imported and its first call made, outside the timing
    with Judges(revision, jobs=1) as judges:
        # Every judge's answer as the cheap judges foresee it (no worker is asked): the
        # findings step's input, with the kernel's and torch's outcomes filled in.
        foreseen = {id(case): judges.predict(case) for case in cases}
        findings = _best(lambda c: judges.findings(foreseen[id(c)]), cases, repeat)
    rows = [
        ("generation (build_case)", generation),
        ("model + exact (classify)", _best(lambda c: model.classify(c, revision), cases, repeat)),
        ("torch check path + verdict", _best(torch_checks, cases, repeat)),
        ("native request records", _best(lambda c: wire.encode(c, False), cases, repeat)),
        ("findings (foreseen outcomes)", findings),
    ]
    print(f"== CPU per case by stage, {count} cases of seed {seed}, {revision}, best of {repeat}")
    for label, micros in rows:
        print(f"  {label:<30} {micros:7.1f} us")


def pipeline(count: int, seed: int, revision: str) -> None:
    """The same cases through every judge, in batches of 256 as a campaign judges them."""
    from convcheck.judges import Judges

    src = RandomSource(seed)
    cases = [build_case(src) for _ in range(count)]
    batches = [cases[k : k + 256] for k in range(0, len(cases), 256)]
    with Judges(revision, jobs=2) as judges:
        judges.evaluate(batches[0][:8])  # the workers started
        confirmed: Counter = Counter()
        thread, (process, workers), wall = time.thread_time(), _cpu(), time.monotonic()
        for batch in batches:
            judges.evaluate(batch, thrifty=confirmed)
        wall = time.monotonic() - wall
        thread = (time.thread_time() - thread) / count * 1e6
        process_now, workers_now = _cpu()
        process = (process_now - process) / count * 1e6
        workers = (workers_now - workers) / count * 1e6
    print(
        f"== all judges, jobs=2: {count / wall:,.0f} cases/s; CPU per case: main thread "
        f"{thread:.0f} us, parent {process:.0f} us, workers {workers:.0f} us, "
        f"total {process + workers:.0f} us (load {os.getloadavg()[0]:.2f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=99)
    parser.add_argument("--revision", default="current")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", choices=["stages", "pipeline"])
    args = parser.parse_args()
    if args.only in (None, "stages"):
        stages(args.cases, args.seed, args.revision, args.repeat)
    if args.only in (None, "pipeline"):
        pipeline(args.cases, args.seed, args.revision)


if __name__ == "__main__":
    main()
