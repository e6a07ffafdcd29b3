"""Requests per second through a WorkerPool with a trivial handler.

Run: ``python benchmarks/bench_sandbox.py``. Prints one row per job count, one column
per batch size: the per-request cost of the sandbox itself (pipes, JSON, the poll loop).
"""

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


def echo(request: dict) -> dict:
    return request


def requests_per_second(pool: WorkerPool, batch_size: int) -> float:
    batch = [{"op": "echo", "index": index} for index in range(batch_size)]
    pool.run(batch)  # start the workers outside the clock
    done = 0
    start = time.perf_counter()
    while time.perf_counter() - start < SECONDS:
        done += len(pool.run(batch))
    return done / (time.perf_counter() - start)


def main() -> None:
    print(f"{'jobs':>4}" + "".join(f"{f'batch {size}':>14}" for size in BATCH_SIZES))
    for jobs in JOBS:
        with WorkerPool(WorkerSpec(handler=HANDLER), jobs=jobs) as pool:
            rates = [requests_per_second(pool, size) for size in BATCH_SIZES]
        print(f"{jobs:>4}" + "".join(f"{rate:>12,.0f}/s" for rate in rates))


if __name__ == "__main__":
    main()
