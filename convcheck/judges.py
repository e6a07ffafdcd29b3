"""The judges: one case in, every judge's answer out.

A case goes to every judge: the model under C arithmetic and under exact arithmetic, the
native kernel (check-only entry always, run entry with real buffers when the shapes are
small), and torch. ``Judges`` keeps them warm across batches and hands each case's
``Judgement`` to ``convcheck.findings``, which turns it into findings.
"""

from __future__ import annotations

import signal
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass

from convcheck import model
from convcheck.case import Case
from convcheck.check_ids import CHECK_IDS, CheckMap, IdReader
from convcheck.errors import ConvcheckError
from convcheck.findings import Finding, findings
from convcheck.outcome import ACCEPT, CRASH, Outcome

# Run-entry (data) only when every tensor is at most this many elements.
SMALL_NUMEL = 4096
# How many times a foreseen native crash is confirmed before exploration skips its copies.
CONFIRMATIONS = 8


@dataclass
class Judgement:
    """Every judge's answer for one case."""

    case: Case
    revision: str
    model: model.ModelRun
    exact: model.ModelRun
    model_findings: list[model.ModelFinding]
    native_check: Outcome | None = None
    native_run: Outcome | None = None
    torch: object | None = None  # a TorchVerdict
    # What the kernel should answer when that is not the model's sanitized prediction:
    # the ExecuTorch target (no sanitizers; it only runs whole).
    expected: Outcome | None = None
    # False when the native judge never answered (a deadline or a stop cut the batch
    # short): such a judgement is no evidence either way, and yields no findings.
    complete: bool = True

    @property
    def kernel(self) -> Outcome | None:
        """What the kernel under test did: the run entry's answer when it ran."""
        return self.native_run or self.native_check

    def predicted(self, with_loops: bool) -> Outcome:
        """What the kernel should answer: the model's sanitized prediction, unless a
        target of its own says otherwise (``expected``)."""
        return self.expected or model.predict(self.model, with_loops)

    def outcomes(self) -> dict[str, Outcome]:
        found = {"model": self.model.outcome, "exact": self.exact.outcome}
        if self.native_check is not None:
            found["native"] = self.native_check
        if self.native_run is not None:
            found["native_run"] = self.native_run
        if self.torch is not None:
            found["torch"] = self.torch.outcome
        return found


def is_small(case: Case) -> bool:
    tensors = [case.input, case.weight, case.out] + ([case.bias] if case.bias else [])
    return all(t.numel <= SMALL_NUMEL for t in tensors) and case.input.rank <= 5


class Judges:
    """All judges for one revision or target, kept warm across batches."""

    def __init__(
        self,
        revision: str = "legacy",
        target: str | None = None,
        jobs: int = 1,
        use_native: bool = True,
        use_torch: bool = True,
        timeout: float = 10.0,
        check_map: CheckMap | None = None,
        compare: str = "id",
    ) -> None:
        model.revision_module(revision)  # an unknown revision fails here, before workers
        self.revision = revision
        self.target = target
        self.jobs = jobs
        self.stopped = False
        # The target's check ids, read as ours; the ids it cannot read, counted.
        self.ids = IdReader(check_map, compare, _known_ids(target))
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="convcheck-native")
        self.native = None
        self.torch = None
        self._explain = None
        self._expected = None
        if use_native and target == "executorch":
            from convcheck import executorch_target

            if revision != "legacy":
                raise ConvcheckError(
                    f"revision {revision!r}: ExecuTorch 1.5.1 runs the legacy kernel "
                    "(use --revision legacy with --target executorch)"
                )
            if not executorch_target.available():
                raise ConvcheckError(f"executorch is not installed: {executorch_target.INSTALL}")
            self.native = executorch_target.ExecutorchJudge(jobs=jobs, timeout=max(timeout, 20.0))
            self._expected = executorch_target.expected_outcome
        elif use_native and target is not None and target.startswith("executorch-source:"):
            from convcheck.executorch_source import PREFIX, ExecutorchSourceJudge

            source = target.removeprefix(PREFIX)
            self.native = ExecutorchSourceJudge(source, jobs=jobs, timeout=timeout)
        elif use_native:
            from convcheck.native import NativeJudge

            self.native = NativeJudge(revision=revision, target=target, jobs=jobs, timeout=timeout)
        if use_torch:
            from convcheck import differences
            from convcheck.torch_oracle import TorchJudge

            self.torch = TorchJudge(jobs=jobs, timeout=max(timeout, 20.0))
            self._explain = differences.explain_difference

    def judge(
        self,
        cases: list[Case],
        thrifty: Counter | None = None,
        deadline: float | None = None,
    ) -> list[Judgement]:
        """Every judge on every case.

        ``thrifty`` (exploration: the campaign's count of confirmed crashes, which this
        updates) spares the native kernel the calls on which the model foresees a crash
        already confirmed ``CONFIRMATIONS`` times: a sanitized crash costs a worker
        restart (~0.2 s), and another copy of a known crash adds nothing.
        Shrinking and replay are never thrifty: they must see every crash.

        ``deadline`` (a ``time.monotonic()`` time) or ``stop`` leaves the native judge's
        unfinished cases with ``complete=False``.
        """
        judgements = []
        for case in cases:
            wrapped, exact, found = model.classify(case, self.revision)
            judgements.append(Judgement(case, self.revision, wrapped, exact, found))
        # torch's check path runs here while the native workers run in their processes.
        native = (
            self._pool.submit(self._judge_native, judgements, thrifty, deadline)
            if self.native
            else None
        )
        if self.torch is not None:
            verdicts = self.torch.judge(cases, compute_rejected=False)
            for j, verdict in zip(judgements, verdicts, strict=True):
                j.torch = verdict
        if native is not None:
            native.result()
        return judgements

    def _judge_native(
        self, judgements: list[Judgement], thrifty: Counter | None, deadline: float | None
    ) -> None:
        if self._expected is not None:
            # ExecuTorch only runs whole: one execution per case, the values when small.
            for j in judgements:
                j.expected = self._expected(j.case)
            chosen = [j for j in judgements if not _confirmed(thrifty, j, True)]
            ran = self.native.run([j.case for j in chosen], deadline)
            for j, outcome in zip(chosen, ran, strict=True):
                j.native_run = self.ids.read(outcome, j.predicted(True), j.case)
                j.complete = outcome is not None
            for j in chosen:
                _count_confirmation(thrifty, j)
            return
        checked = [j for j in judgements if not _confirmed(thrifty, j, False)]
        answers = self.native.check([j.case for j in checked], deadline)
        for j, outcome in zip(checked, answers, strict=True):
            j.native_check = self.ids.read(outcome, j.predicted(False), j.case)
            j.complete = outcome is not None
        runnable = [
            j
            for j in checked
            if j.complete
            and j.native_check.verdict == ACCEPT
            and is_small(j.case)
            and not _confirmed(thrifty, j, True)
        ]
        ran = self.native.run([j.case for j in runnable], deadline)
        for j, outcome in zip(runnable, ran, strict=True):
            if outcome is None:
                j.complete = False
            # An accept without values: the worker judged the shapes too large to run.
            elif not (outcome.verdict == ACCEPT and outcome.values is None):
                j.native_run = self.ids.read(outcome, j.predicted(True), j.case)
        for j in checked:
            _count_confirmation(thrifty, j)

    def findings(self, judgement: Judgement) -> list[Finding]:
        return findings(judgement, self._explain)

    def evaluate(self, cases: list[Case], thrifty: Counter | None = None) -> list[list[Finding]]:
        """Each case's findings; a case the judges could not finish (stopped) has none."""
        return [self.findings(j) if j.complete else [] for j in self.judge(cases, thrifty)]

    def keeps(self, signature: tuple[str, ...]) -> Callable[[list[Case]], list[bool]]:
        """The shrinker's predicate: which cases still show a finding with ``signature``."""

        def judge(cases: list[Case]) -> list[bool]:
            return [any(f.signature == signature for f in found) for found in self.evaluate(cases)]

        return judge

    def stop(self) -> None:
        """Abandon what the workers are doing and judge nothing more (every later case
        is incomplete); safe from a signal handler."""
        self.stopped = True
        for judge in (self.native, self.torch):
            if judge is not None:
                judge.cancel()

    @contextmanager
    def stop_on_signals(self) -> Iterator[None]:
        """The first SIGINT or SIGTERM stops the judges, so that a campaign ends with the
        report of what it found; a second one interrupts at once."""

        def handle(signum, frame) -> None:
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
        for judge in (self.native, self.torch):
            if judge is not None:
                judge.close()
        self._pool.shutdown()

    def __enter__(self) -> Judges:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _known_ids(target: str | None) -> frozenset[str]:
    """Ours, and for ExecuTorch the ids of its own checks that its log map gives."""
    if target != "executorch" and not (target or "").startswith("executorch-source:"):
        return CHECK_IDS
    from convcheck.executorch_target._logs import PATTERNS

    return CHECK_IDS | {check for _, check in PATTERNS if "{" not in check}


def _crash_key(j: Judgement, with_loops: bool) -> tuple | None:
    predicted = j.predicted(with_loops)
    if predicted.verdict != CRASH:
        return None
    return (with_loops, predicted.crash_kind, model.site_family(predicted.crash_site))


def _confirmed(thrifty: Counter | None, j: Judgement, with_loops: bool) -> bool:
    key = None if thrifty is None else _crash_key(j, with_loops)
    return key is not None and thrifty[key] >= CONFIRMATIONS


def _count_confirmation(thrifty: Counter | None, j: Judgement) -> None:
    """A native crash the model foresaw counts toward skipping its copies."""
    if thrifty is None:
        return
    for with_loops, actual in ((False, j.native_check), (True, j.native_run)):
        key = _crash_key(j, with_loops)
        if actual is not None and key is not None and j.predicted(with_loops).agrees(actual):
            thrifty[key] += 1
