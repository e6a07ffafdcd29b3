"""How fast the torch judge answers: calls per second by path and verdict.

    .venv/bin/python benchmarks/bench_torch.py [--count N] [--jobs J] [--threads T]

Four kinds of case, judged in batches through the public ``TorchJudge``:

* small accepted / small rejected: real CPU in sandboxed workers, twice per case (oneDNN
  on and off), values returned for accepted calls;
* large accepted / large rejected: the check path in-process, nothing allocated.

Also the check path alone (in-process) on the small cases, for scale; and the judge's
shortcuts beside the plain way on the calls a campaign runs for real (the one-thread
backend asked again on the check path's arguments or chosen afresh; a real tensor from
the value sequences or from numpy's arithmetic).

Then a campaign's share: the project's generated cases judged as a campaign does
(``compute_rejected=False``), in interleaved pairs with real calls on one intra-op thread
where the backend allows it and with the configured threads everywhere: cases/s, CPU per
case (the parent, and the workers, restarted ones included) and the real calls' thread
counts. No assertions: the numbers depend on the machine and on what else runs on it.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from convcheck.case import Case, TensorSpec  # noqa: E402
from convcheck.ops.convolution.case import ConvolutionCase


def _case(rng: random.Random, large: bool, accept: bool) -> Case:
    nd = rng.choice((1, 2, 3))
    n, c, o = rng.choice((1, 2)), rng.choice((1, 2, 4)), rng.choice((1, 2, 4))
    spatial = [rng.choice((5, 6, 7)) for _ in range(nd)]
    if large:
        spatial[0] = rng.choice((2**20, 2**31 - 1)) if nd < 3 else 2**16
    kernel = [rng.choice((1, 2, 3)) for _ in range(nd)]
    groups = 1
    if not accept:
        # the first check torch makes (groups), or one deep in check_shape_forward
        if rng.random() < 0.5:
            groups = 0
        else:
            kernel[0] = spatial[0] + 2 ** rng.randrange(1, 4)  # kernel larger than the input
    transposed = accept and rng.random() < 0.3
    w = (c, o, *kernel) if transposed else (o, c, *kernel)
    return ConvolutionCase(
        input=TensorSpec((n, c, *spatial)),
        weight=TensorSpec(w),
        bias=TensorSpec((o,)),
        out=TensorSpec((n, o, *spatial)),
        stride=(1,),
        padding=(0,),
        dilation=(1,),
        transposed=transposed,
        output_padding=(0,),
        groups=groups,
    )


def _rate(judge, cases, **kwargs) -> tuple[float, list]:
    start = time.perf_counter()
    verdicts = judge.judge(cases, **kwargs)
    return len(cases) / (time.perf_counter() - start), verdicts


def _cpu() -> tuple[float, float]:
    """(parent, workers) CPU seconds so far: this process; its live descendants and the
    children it reaped (workers replaced after a crash)."""
    tick = os.sysconf("SC_CLK_TCK")

    def descendants(pid: int) -> list[int]:
        found = []
        for task in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{task}/children") as f:
                    kids = [int(k) for k in f.read().split()]
            except OSError:
                continue
            for kid in kids:
                found += [kid, *descendants(kid)]
        return found

    live = 0.0
    for pid in descendants(os.getpid()):
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile: its time is in RUSAGE_CHILDREN once reaped
        live += (int(fields[11]) + int(fields[12])) / tick
    me = resource.getrusage(resource.RUSAGE_SELF)
    reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, live + reaped.ru_utime + reaped.ru_stime


def campaign_share(batches: int, jobs: int, threads: int, pairs: int) -> None:
    """The judge as a campaign calls it, single-thread calls on and off, in pairs."""
    from convcheck.generate import RandomSource
    from convcheck.ops.convolution.generate import build_case
    from convcheck.ops.convolution.torch_oracle import TorchJudge

    print(
        f"== campaign cases (compute_rejected=False), {batches} batches of 256, {jobs} workers, "
        f"{threads} threads, {pairs} interleaved pairs"
    )
    for _ in range(pairs):
        for single in (True, False):
            src = RandomSource(99)
            cases = [[build_case(src) for _ in range(256)] for _ in range(batches)]
            with TorchJudge(jobs=jobs, threads=threads) as judge:
                judge.single_thread = single
                judge.judge(cases[0][:64], compute_rejected=False)  # start the workers
                ran: Counter = Counter()
                (parent0, workers0), start = _cpu(), time.perf_counter()
                for batch in cases:
                    verdicts = judge.judge(batch, compute_rejected=False)
                    ran.update(v.ran_threads for v in verdicts if v.path == "real")
                wall = time.perf_counter() - start
                parent1, workers1 = _cpu()
            n = batches * 256
            calls = ", ".join(f"{t} thread(s): {ran[t]}" for t in sorted(ran))
            print(
                f"  one thread where allowed {'on ' if single else 'off'} {n / wall:7,.0f} cases/s"
                f"   CPU per case: parent {(parent1 - parent0) / n * 1e6:4.0f} us, workers "
                f"{(workers1 - workers0) / n * 1e6:4.0f} us   real cases by threads: {calls}"
            )


def shortcuts(count: int, threads: int) -> None:
    """The judge's shortcuts beside the plain way, in-process on the same cases: the
    one-thread backend asked again on the check path's arguments or chosen afresh, and a
    real call's tensors from the value sequences or from numpy's arithmetic per tensor."""
    import torch

    from convcheck.generate import random_cases
    from convcheck.ops.convolution.torch_oracle import _torch
    from convcheck.ops.convolution.torch_oracle._checks import backend_choice, check_path
    from convcheck.values import logical_values

    private = _torch.has_select_conv_backend()
    # the calls a campaign runs for real: small, and accepted by the check path
    cases, checked = [], []
    for case in random_cases(7, count, small=True):
        on = check_path(case, threads=threads, private=private)
        if on.outcome.verdict == "accept":
            cases.append(case)
            checked.append(on)

    def again() -> None:
        for c, on in zip(cases, checked, strict=True):
            backend_choice(c, threads=1, onednn=True, private=private, checked=on)

    def afresh() -> None:
        for c in cases:
            backend_choice(c, threads=1, onednn=True, private=private)

    def numpy_values(spec, role):
        tensor = _torch.empty_like_spec(spec)
        if spec.numel:
            values = torch.from_numpy(logical_values(spec, role).copy())
            tensor.copy_(values.to(_torch.torch_dtype(spec.dtype)))
        return tensor

    specs = [
        (spec, role)
        for c in cases
        for spec, role in ((c.input, "input"), (c.weight, "weight"), (c.bias, "bias"))
        if spec is not None and spec.numel <= 4096
    ]

    def sequences() -> None:
        for spec, role in specs:
            _torch.real_tensor(spec, role)

    def per_tensor() -> None:
        for spec, role in specs:
            numpy_values(spec, role)

    print(
        f"== shortcuts beside the plain way (in-process, CPU, best of 5, {len(cases)} small "
        "accepted cases)"
    )
    for what, fast, plain, n in (
        ("one-thread backend choice", again, afresh, len(cases)),
        ("a real call's tensor", sequences, per_tensor, len(specs)),
    ):
        a, b = _best_cpu(fast) / n * 1e6, _best_cpu(plain) / n * 1e6
        print(f"  {what:<26} shortcut {a:6.1f} us, plain {b:6.1f} us: {b / a:4.1f}x")


def _best_cpu(run, repeat: int = 5) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        run()
        best = min(best, time.process_time() - start)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=2000, help="cases per kind")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes")
    parser.add_argument("--threads", type=int, default=2, help="torch threads")
    parser.add_argument("--batches", type=int, default=20, help="campaign batches of 256")
    parser.add_argument("--pairs", type=int, default=2, help="campaign interleaved pairs")
    args = parser.parse_args(argv)

    from convcheck.ops.convolution.torch_oracle import TorchJudge
    from convcheck.ops.convolution.torch_oracle._checks import check_path

    rng = random.Random(0)
    kinds = {
        (size, verdict): [
            _case(rng, size == "large", verdict == "accepted") for _ in range(args.count)
        ]
        for size in ("small", "large")
        for verdict in ("accepted", "rejected")
    }
    with TorchJudge(jobs=args.jobs, threads=args.threads) as judge:
        judge.judge(kinds["small", "accepted"][:8])  # start the workers
        print(
            f"torch judge, {args.jobs} workers, {args.threads} threads, "
            f"{args.count} cases a kind; {judge.settings()['torch']}"
        )
        print(f"{'':>8} | {'accepted':>26} | {'rejected':>26}")
        for size in ("small", "large"):
            row = []
            for verdict in ("accepted", "rejected"):
                rate, verdicts = _rate(judge, kinds[size, verdict])
                paths = {v.path for v in verdicts}
                got = sum(
                    v.outcome.verdict == ("accept" if verdict == "accepted" else "reject")
                    for v in verdicts
                )
                row.append(
                    f"{rate:8.0f}/s {1e6 / rate:7.0f} us ({'+'.join(sorted(paths))}"
                    f"{'' if got == len(verdicts) else f', {got} as meant'})"
                )
            print(f"{size:>8} | {row[0]:>26} | {row[1]:>26}")
        small = kinds["small", "accepted"] + kinds["small", "rejected"]
        start = time.perf_counter()
        for case in small:
            check_path(case, threads=args.threads)
        per = (time.perf_counter() - start) / len(small)
        print(
            f"check path alone (in-process, one setting) on the small cases: "
            f"{1 / per:8.0f}/s {per * 1e6:6.0f} us"
        )
    shortcuts(args.count, args.threads)
    campaign_share(args.batches, args.jobs, args.threads, args.pairs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
