"""Throughput of the native judge: cases per second, measured side by side in one run.

    python benchmarks/bench_native.py [--cases 5000] [--revision current] [--jobs 1]

For the check-only and the run entry, sanitized and plain builds, batches of 1 and of
1,000 cases, through the sandbox workers (one worker by default: the numbers are per
worker). Then where a case's time goes inside a worker: decoding the request's JSON,
and the handler (filling the call struct, the C call, the answer) run in this process
on the plain build.

The cases are generated (``convcheck.generate.build_case``, small shapes) and mostly
get deep into the checks; about a quarter are accepted, so the run entry computes for
those. ``current`` is the default revision because ``legacy`` crashes on some of them,
and a crash costs a worker restart (that is measured by the pool tests, not here).
"""

from __future__ import annotations

import argparse
import json
import time

from convcheck.generate import RandomSource
from convcheck.native import NativeJudge
from convcheck.native.build import build_library
from convcheck.ops.convolution.generate import build_case
from convcheck.ops.convolution.native import worker as native_worker


def _rate(count: int, seconds: float) -> float:
    return count / seconds if seconds > 0 else float("inf")


def measure(judge: NativeJudge, entry: str, cases: list, batch: int, budget: float) -> float:
    """Cases per second, sending ``batch`` cases per call, for about ``budget`` seconds."""
    call = judge.check if entry == "check" else judge.run
    call(cases[:batch])  # warm: workers started, library loaded, numpy imported
    done, start = 0, time.perf_counter()
    while True:
        for at in range(0, len(cases), batch):
            chunk = cases[at : at + batch]
            call(chunk)
            done += len(chunk)
            if time.perf_counter() - start > budget:
                return _rate(done, time.perf_counter() - start)


def in_process(revision: str, cases: list) -> dict[str, float]:
    """Inside a worker, without the pipes: JSON decoding, and the handler alone."""
    native_worker.init({"library": str(build_library(revision, sanitized=False))})
    lines = [json.dumps({"case": c.to_json(), "mode": "check"}) for c in cases]
    start = time.perf_counter()
    requests = [json.loads(line) for line in lines]
    decode = _rate(len(lines), time.perf_counter() - start)
    rates = {"json decode": decode}
    for entry in ("check", "run"):
        for request in requests:
            request["mode"] = entry
        native_worker.handle(requests[0])
        start = time.perf_counter()
        for request in requests:
            native_worker.handle(request)
        rates[f"handler, {entry}"] = _rate(len(requests), time.perf_counter() - start)
    return rates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=5000)
    parser.add_argument("--revision", default="current")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--budget", type=float, default=3.0, help="seconds per measurement")
    args = parser.parse_args()

    cases = [build_case(RandomSource(seed), small=True) for seed in range(args.cases)]
    rows = {}
    for sanitized in (True, False):
        with NativeJudge(args.revision, sanitized=sanitized, jobs=args.jobs) as judge:
            accepted = sum(o.verdict == "accept" for o in judge.check(cases))
            for entry in ("check", "run"):
                for batch in (1, 1000):
                    budget = args.budget if batch > 1 else args.budget / 2
                    rows[sanitized, entry, batch] = measure(judge, entry, cases, batch, budget)

    print(
        f"native judge, revision {args.revision}, {args.jobs} worker(s), "
        f"{len(cases)} generated small cases ({accepted} accepted)"
    )
    print(f"{'entry':<6} {'batch':>5} {'sanitized/s':>12} {'plain/s':>10} {'plain/sanitized':>16}")
    for entry in ("check", "run"):
        for batch in (1, 1000):
            sanitized, plain = rows[True, entry, batch], rows[False, entry, batch]
            ratio = plain / sanitized
            print(f"{entry:<6} {batch:>5} {sanitized:>12,.0f} {plain:>10,.0f} {ratio:>16.2f}")
    print()
    print(f"{'entry':<6} {'batch 1000 / batch 1 (sanitized)':>34} {'(plain)':>8}")
    for entry in ("check", "run"):
        ratios = [rows[s, entry, 1000] / rows[s, entry, 1] for s in (True, False)]
        print(f"{entry:<6} {ratios[0]:>34.1f} {ratios[1]:>8.1f}")
    print()
    print("inside a worker (plain build, no pipes):")
    for name, rate in in_process(args.revision, cases).items():
        print(f"  {name:<16} {rate:>10,.0f} cases/s")


if __name__ == "__main__":
    main()
