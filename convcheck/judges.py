"""The judges: one case in, every judge's answer out.

A case goes to every judge: the model under C arithmetic and under exact arithmetic, the
native kernel (check-only entry always, run entry with real buffers when the shapes are
small), and torch. ``Judges`` keeps them warm across batches and hands each case's
``Judgement`` to ``convcheck.findings``, which turns it into findings.
"""

from __future__ import annotations

import functools
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable, Hashable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from types import FrameType
from typing import TYPE_CHECKING, Any

from convcheck import model, registry, targets
from convcheck.case import Case
from convcheck.check_ids import CHECK_IDS, CheckMap, IdReader, ids_of
from convcheck.errors import ConvcheckError
from convcheck.findings import Finding, FindingKind, findings
from convcheck.judgement import Judgement
from convcheck.outcome import ACCEPT, CRASH, REJECT, Outcome
from convcheck.schema import Tensor, schema_of
from convcheck.targets import Target

if TYPE_CHECKING:
    from convcheck.torch_mapping import Explain, TorchJudge, TorchMapping, TorchVerdict

# Run-entry (data) only when every tensor is at most this many elements, and every tensor
# it reads of at most this many dims.
SMALL_NUMEL = 4096
SMALL_RANK = 5
# How many times a foreseen native crash, or a foreseen rejection that real torch accepts,
# is confirmed before exploration skips its copies' native, or real torch, calls.
CONFIRMATIONS = 8


# A campaign's count of confirmations (``Judges.judge``'s ``thrifty``), by kind of finding.
Confirmations = Counter[tuple[Hashable, ...]]


def is_small(case: Case) -> bool:
    """Every tensor at most ``SMALL_NUMEL`` elements, and no tensor the kernel reads of more
    than ``SMALL_RANK`` dims."""
    case_type: type = type(case)  # as in Case.to_json
    for arg in schema_of(case_type):
        t = getattr(case, arg.name)
        if isinstance(arg, Tensor) and t is not None:
            if t.numel > SMALL_NUMEL or (not arg.output and t.rank > SMALL_RANK):
                return False
    return True


def _torch_mapping(op: registry.Op, use_torch: bool | None) -> TorchMapping | None:
    """The op's torch mapping when torch is to judge: ``use_torch`` None (the default)
    means torch wherever the op has a mapping; True asks for it explicitly, and an op
    without one is then an error, as is a mapping whose torch is not installed."""
    mapping = op.torch if use_torch is not False else None
    if mapping is None:
        if use_torch:
            raise ConvcheckError(f"op={op.name!r} has no torch mapping: judge it with --no-torch")
        return None
    if not mapping.available():
        raise ConvcheckError(f"torch is not installed: {mapping.install}, or pass --no-torch")
    return mapping


class Judges:
    """All judges for one revision or target, kept warm across batches.

    ``use_torch``: None (the default) judges with torch where the op has a torch mapping
    (``registry.Op.torch``) and without it where it has none; False never; True insists, and
    fails on an op without one.
    """

    def __init__(
        self,
        revision: str = "legacy",
        target: str | None = None,
        jobs: int = 1,
        use_native: bool = True,
        use_torch: bool | None = None,
        timeout: float = 10.0,
        check_map: CheckMap | None = None,
        compare: str = "id",
        warm: bool = False,
        op: str = registry.DEFAULT_OP,
    ) -> None:
        model.check_revision(revision)  # an unknown revision fails here, before workers
        mapping = _torch_mapping(registry.get(op), use_torch)  # an unknown op fails here too
        self.op = op
        self.revision = revision
        self.target = target
        self.jobs = jobs
        self.stopped = False
        # What makes judges like these, without the jobs: a shard process makes its own.
        self.arguments = {
            "revision": revision,
            "target": target,
            "use_native": use_native,
            "use_torch": use_torch,
            "timeout": timeout,
            "check_map": check_map,
            "compare": compare,
            "op": op,
        }
        # Processes that judge on these judges' behalf (a campaign's shards): stopped and
        # closed with them.
        self._helpers: list[Any] = []
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="convcheck-native")
        self.native: Target | None = None
        # The op's torch judge and its intentional differences (``registry.Op.torch``).
        self.torch: TorchJudge | None = None
        self._explain: Explain | None = None
        self._expected: Callable[[Any], Outcome] | None = None
        # Thrifty judging spares torch's real calls that cannot change a kernel finding
        # (``_torch_matters``); benchmarks and tests turn it off to compare with them all.
        self.spare_torch = True
        own_ids: frozenset[str] = frozenset()
        # An op without a C kernel is judged without one, unless a library is given.
        if use_native and (target is not None or registry.get(op).native is not None):
            started = targets.start(target, revision, jobs, timeout, op)
            self.native, self._expected = started.judge, started.expected
            own_ids = started.check_ids
        # Without a kernel of the op's own (none in C, no target), torch's answers are
        # compared with the model's: the kernel's semantics, as far as they are known.
        self._model_is_kernel = target is None and registry.get(op).native is None
        # The target's check ids, read as ours; the ids it cannot read, counted.
        self.ids = IdReader(check_map, compare, CHECK_IDS | ids_of(op) | own_ids)
        if mapping is not None:
            self.torch = mapping.judge(jobs=jobs, timeout=max(timeout, 20.0), warm=warm)
            self._explain = mapping.explain

    def judge(
        self,
        cases: list[Case],
        thrifty: Confirmations | None = None,
        deadline: float | None = None,
    ) -> list[Judgement]:
        """Every judge on every case.

        ``thrifty`` (exploration: the campaign's count of confirmations, which this
        updates) spares the native kernel the calls on which the model foresees a crash
        already confirmed ``CONFIRMATIONS`` times: a sanitized crash costs a worker
        restart, and another copy of a known crash adds nothing.
        Thrifty judging also spares torch the real calls whose answer cannot change a
        finding about the kernel (``_torch_matters``), a third of them, and those that
        would confirm an over-strict finding already confirmed ``CONFIRMATIONS`` times.
        Shrinking and replay are never thrifty: they must see every crash.

        ``deadline`` (a ``time.monotonic()`` time) or ``stop`` leaves the cases that the
        native judge or torch's real calls did not finish with ``complete=False``.
        """
        # The model first (cheap): which of torch's real calls matter depends on what it
        # predicts the kernel answers. The native workers then run while torch's check
        # path runs here, and torch's workers after it.
        judgements = []
        for case in cases:
            wrapped, exact, found = model.classify(case, self.revision)
            j = Judgement(case, self.revision, wrapped, exact, found, judged_at=time.monotonic())
            j.model_is_kernel = self._model_is_kernel
            if self._expected is not None:
                j.expected = self._expected(case)
            judgements.append(j)
        native = (
            self._pool.submit(self._judge_native, judgements, thrifty, deadline)
            if self.native
            else None
        )
        matters = None
        if thrifty is not None and self.spare_torch:
            matters = functools.partial(self._torch_matters, judgements, thrifty)
        torch_verdicts = (
            self.torch.start(cases, compute_rejected=False, deadline=deadline, matters=matters)
            if self.torch is not None
            else None
        )
        checked_by_torch = time.monotonic()
        verdicts = torch_verdicts() if torch_verdicts is not None else None
        computed = time.monotonic()
        if native is not None:
            native.result()
        # After the native thread is done: it updates ``judged_at`` too.
        if verdicts is not None:
            for j, verdict in zip(judgements, verdicts, strict=True):
                j.torch = verdict
                j.complete = j.complete and verdict.complete
                done = computed if verdict.path == "real" else checked_by_torch
                j.judged_at = max(j.judged_at, done)
            self._confirm_sampled(judgements, deadline)
            for j in judgements:
                _count_over_strict(thrifty, j)
        return judgements

    def _confirm_sampled(self, judgements: list[Judgement], deadline: float | None) -> None:
        """A finding against torch whose oneDNN call was sampled away rests on the call
        without oneDNN standing for both, which replay, making both, may not confirm
        (oneDNN can answer otherwise: then it is torch's own bug). Those few cases make
        the oneDNN call too, so a campaign keeps only what its replay finds."""
        assert self.torch is not None
        doubtful = [
            j
            for j in judgements
            if j.complete
            and j.torch is not None
            and j.torch.onednn_skipped
            and any(f.kind in _AGAINST_TORCH for f in self.findings(j))
        ]
        if not doubtful:
            return
        verdicts = self.torch.start([j.case for j in doubtful], deadline=deadline)()
        for j, verdict in zip(doubtful, verdicts, strict=True):
            j.torch = verdict
            j.complete = verdict.complete
            j.judged_at = max(j.judged_at, time.monotonic())

    def _judge_native(
        self, judgements: list[Judgement], thrifty: Confirmations | None, deadline: float | None
    ) -> None:
        assert self.native is not None
        if self._expected is not None:
            # ExecuTorch only runs whole: one execution per case, the values when small.
            chosen = [j for j in judgements if not _confirmed(thrifty, j, True)]
            self._take(chosen, self.native.run([j.case for j in chosen], deadline), True)
            for j in chosen:
                _count_confirmation(thrifty, j)
            return
        checked = [j for j in judgements if not _confirmed(thrifty, j, False)]
        self._take(checked, self.native.check([j.case for j in checked], deadline), False)
        runnable = [
            j
            for j in checked
            if j.complete
            and j.native_check is not None
            and j.native_check.verdict == ACCEPT
            and is_small(j.case)
            and not _confirmed(thrifty, j, True)
        ]
        ran = self.native.run([j.case for j in runnable], deadline)
        answered = time.monotonic()
        for j, outcome in zip(runnable, ran, strict=True):
            j.judged_at = max(j.judged_at, answered)
            if outcome is None:
                j.complete = False
            # An accept without values: the worker judged the shapes too large to run.
            elif not (outcome.verdict == ACCEPT and outcome.values is None):
                j.native_run = self.ids.read(outcome, j.predicted(True), j.case)
        for j in checked:
            _count_confirmation(thrifty, j)

    def _take(self, judged: list[Judgement], answers: list[Outcome | None], whole: bool) -> None:
        """The kernel's answers to ``judged`` (its run entry's when ``whole``), read as our
        check ids; a case it did not answer (a deadline, a stop) is incomplete."""
        answered = time.monotonic()
        for j, outcome in zip(judged, answers, strict=True):
            read = self.ids.read(outcome, j.predicted(whole), j.case)
            setattr(j, "native_run" if whole else "native_check", read)
            j.complete = outcome is not None
            j.judged_at = max(j.judged_at, answered)

    def _torch_matters(
        self, judgements: list[Judgement], thrifty: Confirmations, index: int, checks: TorchVerdict
    ) -> bool:
        """Whether torch's real calls on a case can change a finding about the kernel,
        given torch's check-path verdict (``checks``), which tests/torch hold equal to
        the real calls' verdict.

        ``findings`` compares the kernel with torch only where the kernel answers as the
        model predicts (else the infidelity is the finding) and accepts or rejects.
        Where it is predicted to accept, torch's sizes and values are compared. Where it
        is predicted to crash, nothing of torch's is. Where it is predicted to reject,
        only torch's acceptance is a finding (over-strict), and not where an intentional
        difference explains it; there real torch confirms the finding, until it has
        confirmed its signature ``CONFIRMATIONS`` times (counted in ``thrifty``, as
        crashes are): its copies are then the check path's.
        """
        j = judgements[index]
        kernel = j.predicted(with_loops=False)
        if kernel.verdict == ACCEPT:
            return True
        if kernel.verdict != REJECT or checks.outcome.verdict != ACCEPT:
            return False
        if self._explain is not None and self._explain(
            j.case, self.revision, kernel, checks.outcome, checks
        ):
            return False
        return thrifty[_over_strict_key(kernel)] < CONFIRMATIONS

    def findings(self, judgement: Judgement) -> list[Finding]:
        return findings(judgement, self._explain)

    def evaluate(
        self, cases: list[Case], thrifty: Confirmations | None = None
    ) -> list[list[Finding]]:
        """Each case's findings; a case the judges could not finish (stopped) has none."""
        return [self.findings(j) if j.complete else [] for j in self.judge(cases, thrifty)]

    def predict(self, case: Case) -> Judgement:
        """What every judge should answer, from the cheap judges alone: the kernel as the
        model predicts it (sanitized: it halts at the first undefined behaviour), torch
        by its check path. No worker is asked; no values are computed."""
        wrapped, exact, found = model.classify(case, self.revision)
        j = Judgement(case, self.revision, wrapped, exact, found)
        j.model_is_kernel = self._model_is_kernel
        if self._expected is not None:
            j.expected = self._expected(case)
            j.native_run = j.expected
        elif self.native is not None:
            j.native_check = j.predicted(with_loops=False)
            if j.native_check.verdict == ACCEPT and is_small(case):
                j.native_run = j.predicted(with_loops=True)
        if self.torch is not None:
            j.torch = self.torch.predict(case)
        return j

    def keeps(
        self, signature: tuple[str, ...], case: Case | None = None, deadline: float | None = None
    ) -> Keeper:
        """The shrinker's predicate: which cases still show a finding with ``signature``.

        Given the finding's ``case``: when the cheap judges foresee the signature there
        (``predict``), a candidate goes to the native and torch judges only if they
        foresee it on the candidate too, so the many candidates that lose it cost no
        worker call. Where they cannot foresee it (the kernel's own bugs, values,
        torch's), every candidate is judged in full. Signatures of the model alone
        (overflow, ordering) need no other judge. Judging stops at ``deadline``.
        """
        foreseen = (
            case is not None and _shows(self.findings(self.predict(case)), signature) is not None
        )
        return Keeper(self, signature, foreseen, deadline)

    def attach(self, helper: Any) -> None:
        """``helper`` (with ``cancel`` and ``close``, such as ``convcheck.shards.Shards``)
        judges for these judges: it stops and closes with them."""
        self._helpers.append(helper)

    def stop(self) -> None:
        """Abandon what the workers are doing and judge nothing more (every later case
        is incomplete); safe from a signal handler."""
        self.stopped = True
        for judge in (self.native, self.torch, *self._helpers):
            if judge is not None:
                judge.cancel()

    @contextmanager
    def stop_on_signals(self) -> Iterator[None]:
        """The first SIGINT or SIGTERM stops the judges, so that a campaign ends with the
        report of what it found; a second one interrupts at once."""

        def handle(signum: int, frame: FrameType | None) -> None:
            if self.stopped:
                raise KeyboardInterrupt
            self.stop()

        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = {sig: signal.signal(sig, handle) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def close(self) -> None:
        # The workers first: closing them abandons a batch the native thread may be
        # waiting on (a hanging target), so that the thread is free to end.
        for judge in (*self._helpers, self.native, self.torch):
            if judge is not None:
                judge.close()
        self._pool.shutdown()

    def __enter__(self) -> Judges:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# Finding kinds that compare the kernel with torch's answer.
_AGAINST_TORCH = (FindingKind.MISSING_CHECK, FindingKind.OVER_STRICT, FindingKind.WRONG_RESULT)

# Finding kinds the model decides alone: the other judges cannot change them.
_MODEL_KINDS = ("overflow", "ordering")


def _shows(found: list[Finding], signature: tuple[str, ...]) -> Finding | None:
    return next((f for f in found if f.signature == signature), None)


class Keeper:
    """``Judges.keeps``: called with candidates, says which keep the signature; ``found``
    holds the finding each kept candidate showed (every judge's outcomes in it), so that
    the minimised finding needs no judging again."""

    def __init__(
        self,
        judges: Judges,
        signature: tuple[str, ...],
        foreseen: bool,
        deadline: float | None,
    ) -> None:
        self.judges = judges
        self.signature = signature
        self.foreseen = foreseen
        self.deadline = deadline
        self.found: dict[Case, Finding] = {}
        self.confirmed = 0  # candidates sent to every judge

    def __call__(self, cases: list[Case]) -> list[bool]:
        worth = cases
        if self.foreseen:
            predicted = [self.judges.findings(self.judges.predict(c)) for c in cases]
            if self.signature[0] in _MODEL_KINDS:
                return [_shows(found, self.signature) is not None for found in predicted]
            worth = [
                c
                for c, found in zip(cases, predicted, strict=True)
                if _shows(found, self.signature)
            ]
        self.confirmed += len(worth)
        judged = self.judges.judge(worth, deadline=self.deadline) if worth else []
        for j in judged:
            shown = _shows(self.judges.findings(j), self.signature) if j.complete else None
            if shown is not None:
                self.found[j.case] = shown
        return [c in self.found for c in cases]


def _crash_key(j: Judgement, with_loops: bool) -> tuple[bool, str | None, str] | None:
    predicted = j.predicted(with_loops)
    if predicted.verdict != CRASH:
        return None
    assert predicted.crash_site is not None
    return (with_loops, predicted.crash_kind, model.site_family(predicted.crash_site))


def _confirmed(thrifty: Confirmations | None, j: Judgement, with_loops: bool) -> bool:
    if thrifty is None:
        return False
    key = _crash_key(j, with_loops)
    return key is not None and thrifty[key] >= CONFIRMATIONS


def _over_strict_key(kernel: Outcome) -> tuple[str, str]:
    return ("over-strict", kernel.check or "")


def _count_over_strict(thrifty: Confirmations | None, j: Judgement) -> None:
    """A rejection the model foresaw and real torch accepted counts toward judging its
    copies by torch's check path (``Judges._torch_matters``)."""
    assert j.torch is not None
    if thrifty is None or j.torch.path != "real" or j.torch.outcome.verdict != ACCEPT:
        return
    predicted = j.predicted(with_loops=False)
    if predicted.verdict == REJECT and j.kernel is not None and predicted.agrees(j.kernel):
        thrifty[_over_strict_key(predicted)] += 1


def _count_confirmation(thrifty: Confirmations | None, j: Judgement) -> None:
    """A native crash the model foresaw counts toward skipping its copies."""
    if thrifty is None:
        return
    for with_loops, actual in ((False, j.native_check), (True, j.native_run)):
        key = _crash_key(j, with_loops)
        if actual is not None and key is not None and j.predicted(with_loops).agrees(actual):
            thrifty[key] += 1
