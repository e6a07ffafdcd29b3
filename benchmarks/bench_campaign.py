"""Campaign speed, measured side by side in one run (the machine is shared and noisy).

1. Cases/s of the pipeline on 2 cores, judge by judge: model alone, + native, + torch,
   + torch making the oneDNN call wherever the backend is oneDNN's (not sampled:
   ``TorchJudge.onednn_every`` 1), + torch making every real call (``Judges.spare_torch``
   off), and + torch without reusing the oneDNN-on answer for oneDNN off (what each cost
   before), all in one process; and
   the whole pipeline in 2 shards (``fuzz --jobs 2``), against the model alone;
   then a seeded campaign (the full pipeline) with ``--jobs 2`` against ``--jobs 1``, both
   as before (one process judges) and in shards (``convcheck.shards``). Beside each rate, the
   CPU time per case of the parent process and of its workers: on a shared machine the
   rate follows the load, while the CPU a case costs barely does, and 2 cores give at
   most 2 s of CPU a second. The 2 shards' ratio to the model alone is about
   ``cores * m / (m + r)``, with ``m`` the CPU a case's generation and model cost (the
   model-alone row's parent column) and ``r`` all the rest (check path, workers, native
   thread): ``m`` is in both rates, so making generation or the model faster lowers the
   ratio while it raises both rates; at 1.93 cores busy, 0.5 needs ``m + r <= 3.86 m``.
2. Minimising: the seconds each finding of a seeded legacy campaign took to shrink.
3. ``convcheck judge case.json``: wall time of a warm run (the second of two).
4. Op by op (``--only ops``): the model alone, the whole pipeline in one process, and in
   2 shards (``fuzz --op OP --jobs 2``), for every op with a C kernel.

Time to the first finding of each bug class, engine by engine, is
``bench_first_finding.py``.

    python benchmarks/bench_campaign.py [--seconds 10] [--revision current] [--only jobs]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass

from convcheck import engines, registry
from convcheck.campaign import Budget, Campaign, example_cases
from convcheck.generate import RandomSource
from convcheck.judges import Judges
from convcheck.ops.convolution.torch_oracle import ONEDNN_EVERY


def rate(
    revision: str,
    seconds: float,
    jobs=2,
    native=True,
    torch=True,
    reuse=True,
    spare=True,
    onednn_every=ONEDNN_EVERY,
    op=registry.DEFAULT_OP,
) -> Rate:
    """Cases/s as a campaign judges: fresh cases every batch, known crashes confirmed, then
    spared."""
    src = RandomSource(99)
    build_case = registry.get(op).build_case
    with Judges(revision, jobs=jobs, use_native=native, use_torch=torch, op=op) as judges:
        judges.spare_torch = spare
        if op == registry.DEFAULT_OP and judges.torch is not None:
            judges.torch.reuse_without_onednn = reuse
            judges.torch.onednn_every = onednn_every
        judges.evaluate([build_case(src) for _ in range(8)])  # start the workers
        confirmed, done, start = Counter(), 0, time.monotonic()
        parent, workers = _own_cpu(), _workers_cpu()[0]
        while time.monotonic() - start < seconds:
            judges.evaluate([build_case(src) for _ in range(256)], thrifty=confirmed)
            done += 256
        wall = time.monotonic() - start
        return Rate(
            done / wall,
            (_own_cpu() - parent) / done * 1e6,
            (_workers_cpu()[0] - workers) / done * 1e6,
        )


@dataclass
class Rate:
    cases_per_second: float
    parent_us: float  # CPU per case of this process (generation, model, torch's checks)
    workers_us: float  # CPU per case of the descendants (shards, native, torch's real calls)
    shards_us: float | None = None  # of which the shards' own (a sharded campaign)
    # Of samples, the share in which a shard and its workers had no thread running or
    # ready to run (waiting for the parent, or for another shard): what the load barely
    # changes, unlike the rate.
    shards_idle: float | None = None

    def describe(self) -> str:
        # Cores busy: what the machine gave this run (2 at most; less when others share it).
        cores = self.cases_per_second * (self.parent_us + self.workers_us) / 1e6
        shards = "" if self.shards_us is None else f" (shards {self.shards_us:4.0f})"
        idle = "" if self.shards_idle is None else f"   shards idle {self.shards_idle:4.1%}"
        return (
            f"{self.cases_per_second:>8,.0f} cases/s   CPU/case: parent {self.parent_us:5.0f} us,"
            f" workers {self.workers_us:5.0f} us{shards}   {cores:4.2f} cores{idle}"
        )


def _own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _workers_cpu() -> tuple[float, float]:
    """Seconds of CPU of this process's descendants: the living ones (Linux's /proc), and
    the ones that ended (a worker a crash replaced), counted by whoever reaped them; and
    of its living children's own (the shards of a sharded campaign, without their
    workers)."""
    reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
    total, children = reaped.ru_utime + reaped.ru_stime, 0.0
    tick = os.sysconf("SC_CLK_TCK")
    pending = [(pid, True) for pid in _children(os.getpid())]
    while pending:
        pid, child = pending.pop()
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # it ended meanwhile (and its parent reaps it)
        # utime and stime, then the same of the children it reaped
        total += sum(int(f) for f in fields[11:15]) / tick
        children += child * sum(int(f) for f in fields[11:13]) / tick
        pending += [(grandchild, False) for grandchild in _children(pid)]
    return total, children


class IdleShards:
    """Samples, in a thread, how often each shard (a child of this process) and its
    workers have no thread in state R (running or ready to run)."""

    def __init__(self) -> None:
        self.samples = self.idle = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        if self._thread.is_alive():
            self._stop.set()
            self._thread.join()

    @property
    def share(self) -> float:
        return self.idle / max(1, self.samples)

    def _sample(self) -> None:
        # Seldom: the sampling is CPU of this process, taken from the shards.
        while not self._stop.wait(0.05):
            for shard in _children(os.getpid()):
                self.samples += 1
                self.idle += not any(_running(pid) for pid in [shard, *_children(shard)])


def _running(pid: int) -> bool:
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/stat") as stat:
                if stat.read().rpartition(")")[2].split()[0] == "R":
                    return True
        except OSError:
            continue
    return False


def _children(pid: int) -> list[int]:
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    found = []
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as children:
                found += [int(child) for child in children.read().split()]
        except OSError:
            pass
    return found


def throughput(seconds: float, revision: str) -> None:
    print(f"== pipeline throughput, {revision}, jobs=2, batches of 256, fresh cases")
    rows = [
        ("model (C + exact)", rate(revision, seconds, native=False, torch=False)),
        ("+ native", rate(revision, seconds, torch=False)),
        ("+ native + torch", rate(revision, seconds)),
        ("  every oneDNN call", rate(revision, seconds, onednn_every=1)),
        ("  every real call", rate(revision, seconds, spare=False)),
        ("  oneDNN off rerun", rate(revision, seconds, reuse=False)),
        # The whole pipeline as ``fuzz --jobs 2`` runs it: a random campaign in 2 shards.
        ("all, 2 shards", campaign_rate(revision, seconds, 2, sharded=True)),
    ]
    base = rows[0][1].cases_per_second
    for label, measured in rows:
        ratio = measured.cases_per_second / base
        print(f"  {label:<20} {measured.describe()}   {ratio:6.3f} x model alone")


def campaign_rate(
    revision: str,
    seconds: float,
    jobs: int,
    sharded: bool,
    case_budget: bool = False,
    op: str = registry.DEFAULT_OP,
) -> Rate:
    """Cases/s of a seeded random campaign once its batches are full size (the workers', or
    the shards', start-up left out), CPU per case of this process and of all its
    descendants (shards, their workers) over the same span. ``case_budget``: run as a
    case budget does (shards' requests settled, ``convcheck.shards.LAG``), else as a time
    budget does."""
    from convcheck.engines import random as random_engine

    marks = []
    idle = IdleShards()

    def mark(cases: int, elapsed: float, kinds: Counter, note: str) -> None:
        if cases < WARM_CASES:
            return
        marks.append((cases, time.monotonic(), _own_cpu(), *_workers_cpu()))
        if len(marks) == 1 and sharded:
            idle.start()
        if marks[-1][1] - marks[0][1] >= seconds:
            run.budget = Budget(cases=cases)  # ends the campaign at its next request

    budget = Budget(cases=10**12 if case_budget else None)
    with Judges(revision, jobs=jobs, op=op) as judges:
        run = Campaign(judges, progress=mark, budget=budget, shards=jobs if sharded else 1)
        try:
            random_engine.explore(run, 99, solved=False)
        finally:
            idle.stop()
    (cases0, wall0, parent0, workers0, shards0) = marks[0]
    (cases1, wall1, parent1, workers1, shards1) = marks[-1]
    done = cases1 - cases0
    return Rate(
        done / (wall1 - wall0),
        (parent1 - parent0) / done * 1e6,
        (workers1 - workers0) / done * 1e6,
        (shards1 - shards0) / done * 1e6 if sharded else None,
        idle.share if sharded else None,
    )


# Cases a campaign judges before its rate is measured: its batches have grown to full size.
WARM_CASES = 3000


def jobs_scaling(seconds: float, revision: str, pairs: int = 3) -> None:
    """A seeded campaign (the full pipeline) with ``--jobs 1``, with ``--jobs 2`` judged in
    the parent as before shards, and with ``--jobs 2`` in two shards (as a time budget
    runs them, and as a case budget does), interleaved so that a change in the machine's
    load falls on all of them."""
    print(f"== --jobs 2 against --jobs 1, a random campaign, {revision}, {pairs} rounds")
    print(f"   load before: {os.getloadavg()[0]:.2f}")
    # (sharded, as a case budget runs)
    variants = {
        "unsharded": (False, False),
        "sharded": (True, False),
        "sharded cases": (True, True),
    }
    ratios: dict[str, list[float]] = {label: [] for label in variants}
    for _ in range(pairs):
        one = campaign_rate(revision, seconds, 1, sharded=False)
        print(f"  jobs 1               {one.describe()}")
        for label, (sharded, case_budget) in variants.items():
            two = campaign_rate(revision, seconds, 2, sharded, case_budget)
            ratio = two.cases_per_second / one.cases_per_second
            ratios[label].append(ratio)
            print(f"  jobs 2 {label:<13} {two.describe()}   {ratio:5.2f} x jobs 1")
        print(f"   load: {os.getloadavg()[0]:.2f}")
    for label, measured in ratios.items():
        print(f"  median jobs 2 {label}: {statistics.median(measured):.2f} x jobs 1")


def minimising(cases: int) -> None:
    print(f"== minimising: legacy, random engine, {cases:,} cases, seed 1, jobs=2")
    with Judges("legacy", jobs=2) as judges:
        run = Campaign(judges, budget=Budget(cases=cases))
        run.explore(engines.load("random"), 1)
        start = time.monotonic()
        run.minimize_all(seconds=60.0)
        total = time.monotonic() - start
    spent = sorted(run.minimize_seconds.values())
    median = statistics.median(spent)
    print(
        f"  {len(spent)} findings minimised in {total:.1f} s: median {median:.2f} s, "
        f"max {spent[-1]:.2f} s (torch's own bugs left as found: "
        f"{sum(not f.about_kernel for f in run.found.values())})"
    )


def judge_wall() -> None:
    example = str(example_cases()[0])
    command = [sys.executable, "-m", "convcheck", "judge", "--revision", "legacy", example]
    walls = []
    for _ in range(2):
        start = time.monotonic()
        subprocess.run(command, capture_output=True, check=False)
        walls.append(time.monotonic() - start)
    name = example.rsplit("/", 1)[-1]
    print(f"== convcheck judge {name}: cold {walls[0]:.2f} s, warm {walls[1]:.2f} s")


def per_op(seconds: float, revision: str) -> None:
    """Each op with a C kernel: the model alone, the pipeline (model, C kernel, torch) in
    one process with 2 workers a judge, and in 2 shards as ``fuzz --jobs 2`` runs it."""
    print(f"== op by op, {revision}, a random campaign's cases, jobs=2")
    print(f"   load before: {os.getloadavg()[0]:.2f}")
    for op in registry.names():
        if registry.get(op).native is None:
            continue
        base = rate(revision, seconds, native=False, torch=False, op=op)
        rows = [
            ("model (C + exact)", base),
            ("+ native + torch", rate(revision, seconds, op=op)),
            ("all, 2 shards", campaign_rate(revision, seconds, 2, sharded=True, op=op)),
        ]
        for label, measured in rows:
            ratio = measured.cases_per_second / base.cases_per_second
            print(f"  {op:<24} {label:<18} {measured.describe()}   {ratio:6.3f} x model alone")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--revision", default="current")
    parser.add_argument("--cases", type=int, default=2000, help="the minimising campaign's")
    parser.add_argument("--only", choices=["throughput", "jobs", "minimising", "judge", "ops"])
    parser.add_argument("--rounds", type=int, default=3, help="of the --jobs comparison")
    args = parser.parse_args()
    if args.only in (None, "throughput"):
        throughput(args.seconds, args.revision)
    if args.only in (None, "jobs"):
        jobs_scaling(args.seconds, args.revision, args.rounds)
    if args.only in (None, "minimising"):
        minimising(args.cases)
    if args.only in (None, "judge"):
        judge_wall()
    if args.only in (None, "ops"):
        per_op(args.seconds, args.revision)


if __name__ == "__main__":
    main()
