"""``prove``: every site of a revision, on every path that reaches it, solved.

Each site query of each explored path (``symbolic.SiteQuery``) has a status: a witness
input, proven impossible, or unknown. Per site, the report keeps every path's status and
one witness, minimised the way a person would write it: the simplest shape first (the
shapes come simplest first), then the fewest elements (sizes 1, then 0, then small) and
then the smallest arguments (distance from each one's simplest value, the schema's):
shrunk in Python and proven smallest by plain queries
(``minimise.py``), ``Optimize`` only for the callers that have no input to start from.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import math
import multiprocessing
import resource
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures import TimeoutError as FuturesTimeout
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field

import z3

from convcheck import model, registry
from convcheck.case import Case
from convcheck.errors import ConvcheckError
from convcheck.fixedint import INT64_MAX
from convcheck.outcome import ACCEPT
from convcheck.sandbox import reap_resource_tracker_at_exit
from convcheck.solver import cache, limits
from convcheck.solver.concrete import Assignment
from convcheck.solver.explore import (
    Inputs,
    Shape,
    default_ranks,
    describe_path,
    explore,
    shapes,
)
from convcheck.solver.minimise import objectives, smallest
from convcheck.solver.symbolic import (
    EXACT_DIFFERS,
    NUMEL_OVERFLOW,
    PROPERTIES,
    PROVEN,
    UNKNOWN,
    WITNESS,
    WRAP,
    Pending,
    Status,
    fork_order,
)

# A worse status (later in ``Status``) wins when a site's paths are summed up.
_RANK = {status: rank for rank, status in enumerate(Status)}


@dataclass
class PathStatus:
    path: str
    status: Status


@dataclass
class SiteReport:
    """One site and one kind of misbehaviour, over every path that reaches it."""

    site: str
    kind: str  # a fixedint UB kind, or one of symbolic.PROPERTIES
    paths: list[PathStatus] = field(default_factory=list)
    witness: Case | None = None
    witness_path: str = ""
    agrees: bool | None = None  # does the concrete model misbehave at the site too?
    judged: str = ""  # what the judges found on the witness
    crash_site: str = ""  # where the sanitized kernel stopped on it ("function file.c:line")
    seconds: float = 0.0

    @property
    def status(self) -> Status:
        return max((p.status for p in self.paths), key=_RANK.__getitem__, default=PROVEN)

    @property
    def undefined(self) -> bool:
        return self.kind not in PROPERTIES

    @classmethod
    def from_json(cls, data: dict) -> SiteReport:
        witness = data["witness"]
        return cls(
            data["site"],
            data["kind"],
            [PathStatus(p["path"], Status(p["status"])) for p in data["paths"]],
            None if witness is None else registry.case_from_json(witness),
            data["witness_path"],
            data["model_agrees"],
            data["judged"],
            seconds=data["seconds"],
        )

    def to_json(self) -> dict:
        return {
            "site": self.site,
            "kind": self.kind,
            "status": self.status,
            "paths": [{"path": p.path, "status": p.status} for p in self.paths],
            "witness": None if self.witness is None else self.witness.to_json(),
            "witness_path": self.witness_path,
            "model_agrees": self.agrees,
            "judged": self.judged,
            "seconds": round(self.seconds, 3),
        }


@dataclass
class ProofReport:
    revision: str
    sites: list[SiteReport]
    paths: int
    shapes_done: int
    shapes_total: int
    seconds: float  # how long the solving took, also when the report is read from the cache
    cached: bool = False  # read from the disk (``solved_report``), not solved by this run

    @property
    def complete(self) -> bool:
        return self.shapes_done == self.shapes_total

    def count(self, status: Status, undefined_only: bool = False) -> int:
        return sum(s.status == status and (s.undefined or not undefined_only) for s in self.sites)

    @classmethod
    def from_json(cls, data: dict) -> ProofReport:
        sites = [SiteReport.from_json(s) for s in data["sites"]]
        shapes = data["shapes"]
        return cls(
            data["revision"],
            sites,
            data["paths"],
            shapes["explored"],
            shapes["total"],
            data["seconds"],
            data["cached"],
        )

    def to_json(self) -> dict:
        return {
            "revision": self.revision,
            "paths": self.paths,
            "shapes": {"explored": self.shapes_done, "total": self.shapes_total},
            "seconds": round(self.seconds, 3),
            "cached": self.cached,
            "sites": [s.to_json() for s in self.sites],
        }


def prove(
    revision: str,
    seconds: float | None = None,
    only: list[Shape] | None = None,
    rlimit: int = limits.QUERY,
    minimise: bool = True,
    jobs: int = 2,
    op: str = registry.DEFAULT_OP,
) -> ProofReport:
    """Explore every shape (or ``only``) until ``seconds``; one report per site and kind.

    The shapes are independent, so ``jobs`` processes explore them (and minimise the
    witnesses) side by side; each report is merged in shape order, so the witness a site
    keeps is the one of its simplest shape, whichever process finished first.
    """
    started = time.monotonic()
    todo = only if only is not None else shapes(revision, op=op)
    deadline = None if seconds is None else time.time() + seconds
    sites: dict[tuple[str, str], SiteReport] = {}
    first: dict[tuple[str, str], tuple[Shape, _Witness]] = {}
    paths = done = 0
    # The longest shapes first, so that the last one a worker takes is a short one (the
    # reports still merge in shape order); under a time budget the simplest first.
    longest = list(range(len(todo)))
    if deadline is None:
        longest.sort(key=lambda i: todo[i].work)
    by_shape: dict[int, list[_Explored | None]] = {i: [] for i in range(len(todo))}
    running = [1] * len(todo)  # each shape's units not yet explored
    minimised: dict[tuple[str, str], tuple] = {}  # (found, seconds) by site and kind
    settled: list[int] = []  # the shapes whose witnesses are in ``first``, in order

    def settle() -> list[tuple]:
        """The witnesses of the shapes explored in full, up to the first shape that is
        not: they are the report's (the simplest shape's witness), so they are minimised
        at once, beside the exploration of the longer shapes (legacy: 23 of 27)."""
        tasks = []
        while len(settled) < len(todo):
            index = len(settled)
            if running[index] or None in by_shape[index]:
                break
            settled.append(index)
            for key, witness in _first_witnesses(by_shape[index]).items():
                if key not in first:
                    first[key] = (todo[index], witness)
                    if minimise:
                        tasks.append((_minimise, key, todo[index], witness))
        return tasks

    def more(task, result):
        if task[0] is _minimise:
            key, answer = result
            minimised[key] = answer
            return []
        _, _, index, shape, _, *rest = task
        by_shape[index].append(result)
        left = result.left if result is not None else ()
        running[index] += len(left) - 1
        units = [(_explore_unit, revision, index, shape, part, *rest) for part in left]
        return units + (settle() if not running[index] else [])

    with _workers(jobs) as (run, unfold):
        unfold(
            [(_explore_unit, revision, i, todo[i], None, rlimit, deadline) for i in longest], more
        )
        for index, shape in enumerate(todo):
            parts = by_shape[index]
            if all(part is None for part in parts):
                continue  # time ran out before this shape began
            done += None not in parts
            explored = [part for part in parts if part is not None]
            paths += sum(len(part.paths) for part in explored)
            # Every path in the order of one depth-first search of the shape, whichever
            # process explored which part: the same report from any number of workers.
            for _, statuses in sorted(p for part in explored for p in part.paths):
                for site, kind, path, status in statuses:
                    report = sites.setdefault((site, kind), SiteReport(site, kind))
                    report.paths.append(PathStatus(path, status))
            if index >= len(settled):  # a settled shape's witnesses are in ``first``
                for key, witness in _first_witnesses(explored).items():
                    first.setdefault(key, (shape, witness))
        chosen = list(first.items())
        rest = [(key, s, w) for key, (s, w) in chosen if key not in minimised]
        if minimise and rest:  # the witnesses of shapes after one cut short by the time
            minimised.update(run(_minimise, rest))
        for key, (shape, witness) in chosen:
            found, took = minimised.get(key, (None, 0.0))
            report = sites[key]
            report.witness = found or witness.case
            report.witness_path = describe_path(shape, witness.prefix)
            report.agrees = misbehaves_at(report.witness, revision, *key)
            report.seconds = took
    ordered = sorted(sites.values(), key=lambda s: (-_RANK[s.status], s.site, s.kind))
    return ProofReport(revision, ordered, paths, done, len(todo), time.monotonic() - started)


def _first_witnesses(explored) -> dict[tuple[str, str], _Witness]:
    """The shape's first witness of each site, in the order of one depth-first search of
    it, from its units (``None``: one the time budget stopped)."""
    witnesses: dict[tuple[str, str], tuple[tuple, _Witness]] = {}
    for part in explored:
        for key, (order, witness) in part.witnesses.items() if part is not None else ():
            if key not in witnesses or order < witnesses[key][0]:
                witnesses[key] = (order, witness)
    return {key: witness for key, (_, witness) in witnesses.items()}


@dataclass
class _Witness:
    """A site's first witness on one shape, in a form that crosses processes."""

    prefix: tuple[bool, ...]
    case: Case  # the input the path found
    values: dict[str, int]  # the same input, as the values of the shape's variables
    query: str  # the path's decisions and then the site's condition, as SMT-LIB


@dataclass
class _Explored:
    """A unit of a shape's exploration: its paths (each with its place in the shape's
    depth-first order, ``fork_order``, and its (site, kind, path, status) records), the
    first witness of each site with its place, and what is left to explore, as units."""

    paths: list[tuple[tuple, list[tuple[str, str, str, Status]]]]
    witnesses: dict[tuple[str, str], tuple[tuple, _Witness]]
    left: list[tuple[Pending, ...]]


# How many paths a unit explores before what is left of it becomes two units: the
# workers share a long shape (hundreds of paths, a minute),
# and a unit is the same work in any process, so the report does not depend on --jobs.
_UNIT_PATHS = 24


def _explore_unit(
    revision: str, index: int, shape: Shape, stack, rlimit: int, deadline
) -> _Explored | None:
    """Explore a part of ``shape`` (``stack``, pending paths; None: from its first path) for
    ``_UNIT_PATHS`` paths. Its z3 context is its own (``Inputs.of``), so are the inputs
    its queries found: its answers do not depend on what the process solved before."""
    if deadline is not None and time.time() > deadline:
        return None
    explored = _Explored([], {}, [])
    seen: set[tuple] = set()
    left = list(stack or ())
    for path in explore(revision, shape, rlimit, _UNIT_PATHS, left):
        order = fork_order(path.forks)
        statuses = []
        for q in path.queries:
            key = (q.prefix, q.site, q.kind)
            if key in seen:
                continue
            seen.add(key)
            statuses.append((q.site, q.kind, describe_path(shape, q.prefix), q.status))
            if q.status == WITNESS and (q.site, q.kind) not in explored.witnesses:
                assert q.witness is not None  # the model the solver found
                query = z3.Solver()
                query.add(*q.decisions, q.condition)
                case = path.inputs.concrete_case(q.witness)
                explored.witnesses[(q.site, q.kind)] = (
                    order,
                    _Witness(q.prefix, case, q.witness.values, query.sexpr()),
                )
        if path.unknown_branches:
            statuses.append(("(branch)", UNKNOWN, path.describe(), UNKNOWN))
        explored.paths.append((order, statuses))
    if left:
        # The shallowest forks (the bottom of the stack) lead to the largest subtrees.
        half = (len(left) + 1) // 2
        explored.left = [tuple(part) for part in (left[:half], left[half:]) if part]
    return explored


def _minimise(key: tuple[str, str], shape: Shape, witness: _Witness):
    """``key`` (the site's, so that ``prove`` knows which answer this is, from any
    process) with the minimised input of ``witness`` (None when out of time) and the
    seconds it took."""
    clock = time.monotonic()
    inputs = Inputs.of(shape)
    *decisions, condition = z3.parse_smt2_string(witness.query)
    found = minimal_witness_of(inputs, decisions, condition, start=Assignment(witness.values))
    return key, ((None if found is None else inputs.concrete_case(found)), time.monotonic() - clock)


# A worker's address space, and how long one task of it may take at most.
_WORKER_MEMORY = 4 << 30
_TASK_SECONDS = 1800


@contextlib.contextmanager
def _workers(jobs: int):
    """``(run, unfold)`` from ``jobs`` processes (spawned: z3 holds threads a fork would
    copy mid-state), else in this one. ``run(function, argument tuples)``: the results in
    order. ``unfold(tasks, more)``, a task being ``(function, *arguments)``: runs every
    task, where ``more(task, result)`` (called here, as each ends) gives further tasks, in
    no fixed order. The pool is terminated and joined on the way out, whatever happened."""
    if jobs <= 1:

        def unfold_here(tasks, more):
            todo = collections.deque(tasks)
            while todo:
                task = todo.popleft()
                todo.extend(more(task, task[0](*task[1:])))

        yield (lambda function, arguments: [function(*a) for a in arguments]), unfold_here
        return
    # Not multiprocessing.Pool: it replaces a worker that died (an abort in z3, the
    # address-space limit) and its task never ends. Here the pool breaks at once.
    before = set(multiprocessing.active_children())
    reap_resource_tracker_at_exit()
    pool = ProcessPoolExecutor(
        jobs,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_start_worker,
        initargs=(dict(registry.OPS),),
    )
    try:

        def run(function, arguments):
            pending = [pool.submit(function, *a) for a in arguments]
            return [_result(p) for p in pending]

        def unfold(tasks, more):
            running = {pool.submit(*task): task for task in tasks}
            while running:
                done, _ = wait(running, timeout=_TASK_SECONDS, return_when=FIRST_COMPLETED)
                if not done:
                    raise ConvcheckError(f"prove: no solver task ended in {_TASK_SECONDS} s")
                for future in done:
                    for task in more(running.pop(future), _result(future)):
                        running[pool.submit(*task)] = task

        yield run, unfold
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
        _kill_children_since(before)  # the executor cannot stop a busy worker
        pool.shutdown(wait=True)
        _kill_children_since(before)  # one its thread started meanwhile (a broken pool)


def _kill_children_since(before: set) -> None:
    for worker in set(multiprocessing.active_children()) - before:
        worker.kill()
        worker.join()


def _result(future):
    try:
        return future.result(timeout=_TASK_SECONDS)
    except BrokenProcessPool:
        raise ConvcheckError(
            "prove: a solver process died (out of memory, or z3 aborted); "
            "--jobs 1 runs in this process and shows where"
        ) from None
    except FuturesTimeout:
        raise ConvcheckError(f"prove: a solver task ran past {_TASK_SECONDS} s") from None


def _start_worker(known: dict[str, str]) -> None:
    """A spawned worker knows the ops this process knows (one registered at run time, a
    test's toy, is in no entry point), and has a memory limit."""
    for name, path in known.items():
        registry.register(name, path)
    resource.setrlimit(resource.RLIMIT_AS, (_WORKER_MEMORY, _WORKER_MEMORY))


def gaps(revision: str, op: str = registry.DEFAULT_OP) -> list[str]:
    """Every site of ``op``'s ``revision``'s calls, of every rank ``prove`` solves by
    default, that is not proven, one line each.

    For ``ci``: solved once per version of the model and solver (seconds on 2 cores:
    benchmarks/README.md), and read from the disk cache after that. Where a query runs
    out of its steps, the shapes are solved again with five times as many before it
    counts as unknown; either way the answer is the same on any machine.
    """
    name = f"gaps-{revision}" if op == registry.DEFAULT_OP else f"gaps-{op}-{revision}"
    return cache.solved(name, lambda: (_gaps(revision, op), True))


def _gaps(revision: str, op: str) -> list[str]:
    only = shapes(revision, default_ranks(revision, op), op)
    report = prove(revision, only=only, minimise=False, op=op)
    if report.count(UNKNOWN):
        report = prove(revision, only=only, rlimit=5 * limits.QUERY, minimise=False, op=op)
    return [
        f"{s.site} ({s.kind}): {s.status} on "
        + next(p.path for p in s.paths if p.status == s.status)
        for s in report.sites
        if s.status != PROVEN
    ]


def solved_report(
    revision: str,
    only: list[Shape],
    seconds: float | None = None,
    fresh: bool = False,
    jobs: int = 2,
) -> ProofReport:
    """``prove(revision, seconds, only)`` solved once per version of the code on a machine,
    then read from the disk (``cached``, with the seconds the solving took): ``convcheck
    prove``, the solver engine's cases and the tests of its witnesses share one solve. The
    proof is a property of the model and the solver, not of a kernel: the cache is keyed
    by the hash of their sources and z3's version (``cache``), and a report cut short by
    ``seconds`` is not stored. ``fresh``: solve again (and store the answer). ``jobs``
    changes the time, never the report (``prove``)."""
    name = f"prove-{revision}-" + "-".join(f"{s.op}{s.key}" for s in only)
    return cache.solved(
        name,
        lambda: (report := prove(revision, seconds, only, jobs=jobs), report.complete),
        ProofReport.to_json,
        lambda data: dataclasses.replace(ProofReport.from_json(data), cached=True),
        fresh,
    )


# Bounds tried in turn before none: a bounded search is fast, and most witnesses fit.
_TIERS = ((3, 3), (3, None), (None, None))  # (largest size, largest |arg - natural|)


def minimal_witness_of(
    inputs: Inputs, decisions, condition, rlimit: int = limits.MINIMISE, start=None
):
    """The witness a person would write: the smallest input taking ``decisions`` and
    meeting ``condition``. From ``start`` (an ``Assignment`` that does): shrunk in Python
    and bisected by plain queries (``minimise.smallest``: where a query runs out of
    steps, the cheapest input found so far); else ``Optimize`` tier by tier, None when
    it runs out of steps."""
    if start is not None:
        return smallest(inputs, (condition, *decisions), start)[0]
    return _optimised(inputs, decisions, condition, rlimit)


def _optimised(inputs: Inputs, decisions, condition, rlimit: int):
    """``Optimize``, tier by tier; None when it runs out of steps."""
    for size_bound, value_bound in _TIERS:
        # The bounded tiers answer fast or not at all; the last one gets the steps.
        unbounded = value_bound is None and size_bound is None
        opt = limits.optimizer(rlimit if unbounded else limits.BOUNDED)
        opt.add(*inputs.domain, *decisions, condition)
        if size_bound is not None:
            opt.add(*(s <= size_bound for terms in inputs.sizes.values() for s in terms))
        if value_bound is not None:
            opt.add(
                *(
                    z3.Abs(v - inputs.natural[name]) <= value_bound
                    for name, terms in inputs.ints.items()
                    for v in terms
                )
            )
        for objective in objectives(inputs):
            opt.minimize(objective)
        answer = opt.check()
        if answer == z3.sat:
            return opt.model()
    return None


def misbehaves_at(case: Case, revision: str, site: str, kind: str) -> bool:
    """The plain model on the witness: the symbolic run and the concrete one must agree."""
    if kind == NUMEL_OVERFLOW:
        outcome = model.run(case, revision).outcome
        sizes = outcome.out_sizes
        return outcome.verdict == ACCEPT and sizes is not None and math.prod(sizes) > INT64_MAX
    if kind == EXACT_DIFFERS:
        return any(f.kind == "overflow" for f in model.classify(case, revision)[2])
    run = model.run(case, revision)
    if kind == WRAP:
        return any(op.site == site and op.flag for step in run.steps for op in step.ops)
    event = run.first_ub(include_loops=True)
    return event is not None and (event.site, event.kind) == (site, kind)


def judge_witnesses(report: ProofReport, judges, corpus_dir=None, meta=None) -> None:
    """Every witness through the judges; its findings go to the corpus like any other.

    An undefined-behaviour witness is confirmed when the sanitized kernel crashes with the
    sanitizer kind the model foresees; anything else the judges say is reported as is.
    """
    from convcheck import corpus
    from convcheck.outcome import CRASH

    reports = [s for s in report.sites if s.witness is not None]
    known = set()
    if corpus_dir is not None and corpus_dir.is_dir():
        known = {e.key for e in corpus.load_all(corpus_dir)}
    for site, judgement in zip(reports, judges.judge([s.witness for s in reports]), strict=True):
        found = judges.findings(judgement)
        kernel = judgement.kernel
        if site.undefined:
            expected = model.NATIVE_CRASH_KIND[site.kind]
            crashed = kernel is not None and kernel.verdict == CRASH
            confirmed = crashed and kernel.crash_kind == expected
            said = kernel.describe() if kernel is not None else "no native judge"
            site.crash_site = (kernel.crash_site or "") if confirmed else ""
            site.judged = f"native {said}" + ("" if confirmed else f" (expected {expected})")
            site.judged += "; findings: " + ("; ".join(f.key for f in found) or "none")
        else:
            site.judged = "findings: " + ("; ".join(f.key for f in found) or "none")
        for finding in found:
            if corpus_dir is not None and finding.key not in known:
                corpus.write(corpus_dir, finding, judges.revision, judges.target, meta or {})
                known.add(finding.key)


def format_report(report: ProofReport) -> str:
    from convcheck.report import describe_case

    lines = []
    for s in report.sites:
        lines.append(f"{s.status:<8} {s.site:<40} {s.kind:<26} {len(s.paths)} path(s)")
        if s.witness is not None:
            lines.append(f"         witness: {describe_case(s.witness)}")
            lines.append(f"         on {s.witness_path}")
            if s.agrees is False:
                lines.append("         the concrete model does NOT misbehave there")
            if s.judged:
                lines.append(f"         judged: {s.judged}")
        elif s.status == UNKNOWN:
            unknown = [p.path for p in s.paths if p.status == UNKNOWN]
            lines.append(f"         unknown on {unknown[0]}" + (" and more" * (len(unknown) > 1)))
    explored = f"{report.shapes_done}/{report.shapes_total} shapes"
    if not report.complete:
        explored += " (time ran out: the rest is unknown)"
    took = f"{report.seconds:.1f} s"
    if report.cached:
        took = f"read from the cache (solved in {took}; --no-cache solves again)"
    lines.append(
        f"{report.revision}: {len(report.sites)} site(s), {report.paths} path(s), {explored}; "
        f"witness {report.count(WITNESS)}, proven {report.count(PROVEN)}, "
        f"unknown {report.count(UNKNOWN)}; {took}"
    )
    return "\n".join(lines)
