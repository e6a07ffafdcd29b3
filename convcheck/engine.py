"""Case in, outcomes out, findings as their disagreements.

A case goes to every judge: the model under C arithmetic and under exact arithmetic, the
native kernel (check-only entry always, run entry with real buffers when the shapes are
small), and torch. ``findings`` turns one case's outcomes into zero or more ``Finding``s,
each with a *signature*: what deduplication and minimisation preserve.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from convcheck import model
from convcheck.case import Case
from convcheck.errors import ConvcheckError
from convcheck.outcome import ACCEPT, CRASH, HANG, REJECT, Outcome

# Run-entry (data) only when every tensor is at most this many elements.
SMALL_NUMEL = 4096
# How many times a foreseen native crash is confirmed before exploration skips its copies.
CONFIRMATIONS = 8

FINDING_KINDS = (
    "crash",
    "infidelity",
    "missing-check",
    "over-strict",
    "wrong-result",
    "overflow",
    "ordering",
    "torch-bug",
)

# Tolerances of a value comparison: accumulation order differs between kernels.
_TOLERANCE = {"float64": 1e-9, "float32": 1e-4, "float16": 2e-2, "bfloat16": 5e-2}


@dataclass(frozen=True)
class Finding:
    kind: str
    signature: tuple[str, ...]
    case: Case
    outcomes: dict[str, Outcome] = field(compare=False)
    explanation: str = field(compare=False, default="")

    @property
    def key(self) -> str:
        return " | ".join(self.signature)

    @property
    def about_kernel(self) -> bool:
        """A torch-bug is reported, but it is not the kernel's to fix."""
        return self.kind != "torch-bug"

    def describe(self) -> str:
        return f"{self.kind}: {self.explanation}"


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

    @property
    def kernel(self) -> Outcome | None:
        """What the kernel under test did: the run entry's answer when it ran."""
        return self.native_run or self.native_check

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


def outcome_class(outcome: Outcome) -> str:
    """The part of an outcome a signature keeps: verdict and check id or crash kind."""
    if outcome.verdict == REJECT:
        return f"reject {outcome.check}"
    if outcome.verdict == CRASH:
        return f"crash {outcome.crash_kind}"
    return outcome.verdict


def agree(predicted: Outcome, actual: Outcome) -> bool:
    if predicted.verdict != actual.verdict:
        return False
    if predicted.verdict == REJECT:
        return predicted.check == actual.check
    if predicted.verdict == ACCEPT:
        return predicted.out_sizes == actual.out_sizes
    if predicted.verdict == CRASH:
        return predicted.crash_kind == actual.crash_kind
    return True


def crash_site_family(site: str | None) -> str:
    """A sanitizer site is ``function file:line``; the function names the bug."""
    if not site:
        return "?"
    return model.site_family(site.split()[0])


def values_differ(dtype: str, a: tuple[float, ...], b: tuple[float, ...]) -> str | None:
    if len(a) != len(b):
        return f"{len(a)} values against {len(b)}"
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if dtype in _TOLERANCE:
        tol = _TOLERANCE[dtype]
        scale = max(1.0, float(np.max(np.abs(y))) if y.size else 1.0)
        bad = ~np.isclose(x, y, rtol=tol, atol=tol * scale, equal_nan=True)
    else:
        bad = x != y
    if not bad.any():
        return None
    i = int(np.argmax(bad))
    return f"value {i}: {x[i]!r} against {y[i]!r}"


def overflow_site(run: model.ModelRun) -> str:
    """Where the C arithmetic first left the exact one: UB, narrowing or unsigned wrap."""
    for step in run.steps:
        for op in step.ops:
            if op.flag:
                return op.site
    return "?"


def findings(j: Judgement, explain_difference=None) -> list[Finding]:
    """Every disagreement among the outcomes of one case."""
    case, out = j.case, j.outcomes()
    found: list[Finding] = []

    def add(kind: str, signature: tuple[str, ...], explanation: str) -> None:
        found.append(Finding(kind, (kind, *signature), case, out, explanation))

    for mf in j.model_findings:
        site = overflow_site(j.model) if mf.kind == "overflow" else mf.site
        add(mf.kind, (model.site_family(site),), mf.detail)

    kernel = j.kernel
    if kernel is not None and kernel.verdict in (CRASH, HANG):
        # Where the model foresaw this crash, its step names the bug better than the C
        # function that happened to fault (a bias over-read faults in a per-dtype loader).
        foreseen = j.expected or model.predict(j.model, with_loops=j.native_run is not None)
        if foreseen.verdict == CRASH and foreseen.crash_kind == kernel.crash_kind:
            site = model.site_family(foreseen.crash_site)
        else:
            site = crash_site_family(kernel.crash_site)
        add("crash", (kernel.crash_kind or kernel.verdict, site), f"native {kernel.describe()}")

    for name, actual, with_loops in (
        ("native", j.native_check, False),
        ("native_run", j.native_run, True),
    ):
        if actual is None:
            continue
        predicted = j.expected or model.predict(j.model, with_loops)
        if not agree(predicted, actual):
            add(
                "infidelity",
                (outcome_class(predicted), outcome_class(actual)),
                f"model predicts {predicted.describe()}, {name} gives {actual.describe()}",
            )

    verdict = j.torch
    if verdict is None:
        return found
    torch_outcome = verdict.outcome
    if torch_outcome.verdict in (CRASH, HANG):
        add("torch-bug", (outcome_class(torch_outcome),), f"torch {torch_outcome.describe()}")
    elif verdict.torch_bug:
        # The bug's class is the part before the details; numbers vary from case to case.
        summary = re.sub(r"\d+", "N", verdict.torch_bug.split(";")[0])
        summary = re.sub(r"\[[N, ]*\]", "[...]", summary)
        add("torch-bug", (summary,), verdict.torch_bug)
    if (
        kernel is None
        or kernel.verdict not in (ACCEPT, REJECT)
        or torch_outcome.verdict not in (ACCEPT, REJECT)
    ):
        return found
    if explain_difference is not None and explain_difference(
        case, j.revision, kernel, torch_outcome, verdict
    ):
        return found
    if kernel.verdict == ACCEPT and torch_outcome.verdict == REJECT:
        add(
            "missing-check",
            (torch_outcome.check,),
            f"kernel accepts, torch rejects: {torch_outcome.check}",
        )
    elif kernel.verdict == REJECT and torch_outcome.verdict == ACCEPT:
        add("over-strict", (kernel.check,), f"kernel rejects {kernel.check}, torch accepts")
    elif kernel.verdict == ACCEPT:
        if kernel.out_sizes != torch_outcome.out_sizes:
            add(
                "wrong-result",
                ("sizes",),
                f"kernel gives {list(kernel.out_sizes)}, torch {list(torch_outcome.out_sizes)}",
            )
        elif kernel.values is not None and torch_outcome.values is not None:
            why = values_differ(case.input.dtype, kernel.values, torch_outcome.values)
            if why:
                add("wrong-result", ("values",), why)
    return found


class Engine:
    """All judges for one revision or target, kept warm across batches."""

    def __init__(
        self,
        revision: str = "legacy",
        target: str | None = None,
        jobs: int = 1,
        use_native: bool = True,
        use_torch: bool = True,
        timeout: float = 10.0,
    ) -> None:
        model.revision_module(revision)  # an unknown revision fails here, before workers
        self.revision = revision
        self.target = target
        self.jobs = jobs
        self._confirmations: dict[tuple, int] = {}
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

    def judge(self, cases: list[Case], thrifty: bool = False) -> list[Judgement]:
        """Every judge on every case.

        ``thrifty`` (exploration) spares the native kernel the calls on which the model
        foresees a crash already confirmed ``CONFIRMATIONS`` times: a sanitized crash
        costs a worker restart (~0.2 s), and another copy of a known crash adds nothing.
        Shrinking and replay are never thrifty: they must see every crash.
        """
        judgements = []
        for case in cases:
            wrapped, exact, found = model.classify(case, self.revision)
            judgements.append(Judgement(case, self.revision, wrapped, exact, found))
        # torch's check path runs here while the native workers run in their processes.
        native = self._pool.submit(self._judge_native, judgements, thrifty) if self.native else None
        if self.torch is not None:
            verdicts = self.torch.judge(cases, compute_rejected=False)
            for j, verdict in zip(judgements, verdicts, strict=True):
                j.torch = verdict
        if native is not None:
            native.result()
        return judgements

    def _judge_native(self, judgements: list[Judgement], thrifty: bool) -> None:
        if self._expected is not None:
            # ExecuTorch only runs whole: one execution per case, the values when small.
            for j in judgements:
                j.expected = self._expected(j.case)
            chosen = [j for j in judgements if not (thrifty and self._confirmed(j, True))]
            for j, outcome in zip(chosen, self.native.run([j.case for j in chosen]), strict=True):
                j.native_run = outcome
            for j in chosen:
                self._count_confirmation(j)
            return
        checked = [j for j in judgements if not (thrifty and self._confirmed(j, False))]
        for j, outcome in zip(checked, self.native.check([j.case for j in checked]), strict=True):
            j.native_check = outcome
        runnable = [
            j
            for j in checked
            if j.native_check.verdict == ACCEPT
            and is_small(j.case)
            and not (thrifty and self._confirmed(j, True))
        ]
        ran = self.native.run([j.case for j in runnable])
        for j, outcome in zip(runnable, ran, strict=True):
            # An accept without values: the worker judged the shapes too large to run.
            if not (outcome.verdict == ACCEPT and outcome.values is None):
                j.native_run = outcome
        for j in checked:
            self._count_confirmation(j)

    def _confirmed(self, j: Judgement, with_loops: bool) -> bool:
        predicted = j.expected or model.predict(j.model, with_loops)
        if predicted.verdict != CRASH:
            return False
        key = (with_loops, predicted.crash_kind, model.site_family(predicted.crash_site))
        return self._confirmations.get(key, 0) >= CONFIRMATIONS

    def _count_confirmation(self, j: Judgement) -> None:
        """A native crash the model foresaw counts toward skipping its copies."""
        for with_loops, actual in ((False, j.native_check), (True, j.native_run)):
            predicted = j.expected or model.predict(j.model, with_loops)
            if actual is not None and predicted.verdict == CRASH and agree(predicted, actual):
                key = (with_loops, predicted.crash_kind, model.site_family(predicted.crash_site))
                self._confirmations[key] = self._confirmations.get(key, 0) + 1

    def findings(self, judgement: Judgement) -> list[Finding]:
        return findings(judgement, self._explain)

    def evaluate(self, cases: list[Case], thrifty: bool = False) -> list[list[Finding]]:
        return [self.findings(j) for j in self.judge(cases, thrifty)]

    def close(self) -> None:
        self._pool.shutdown()
        for judge in (self.native, self.torch):
            if judge is not None:
                judge.close()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def describe_case(case: Case) -> str:
    """One line for a report: the shapes and the arguments that are not the default."""
    parts = [f"in {list(case.input.sizes)}", f"w {list(case.weight.sizes)}"]
    if case.bias is not None:
        other_dtype = "" if case.bias.dtype == case.input.dtype else f" {case.bias.dtype}"
        parts.append(f"b {list(case.bias.sizes)}{other_dtype}")
    if case.input.dtype != "float32":
        parts.append(case.input.dtype)
    for name in ("stride", "padding", "dilation"):
        parts.append(f"{name[0]}={list(getattr(case, name))}")
    if case.transposed:
        parts.append(f"transposed op={list(case.output_padding)}")
    if case.groups != 1:
        parts.append(f"groups={case.groups}")
    return " ".join(parts)
