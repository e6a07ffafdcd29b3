"""Findings: the disagreements among one case's outcomes, each with a signature.

``findings`` is the table that turns a ``Judgement`` (every judge's answer for one case)
into zero or more ``Finding``s. A finding's *signature* is its root cause: what
deduplication and minimisation preserve, and what names its corpus file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

import numpy as np

from convcheck import model
from convcheck.case import Case
from convcheck.outcome import ABI_VIOLATION, ACCEPT, CRASH, HANG, REJECT, TOOL_ERROR, Outcome

if TYPE_CHECKING:
    from convcheck.judges import Judgement


class FindingKind(StrEnum):
    """The kinds of finding; each value is the string the corpus and SARIF use."""

    CRASH = "crash", "the kernel crashed: a sanitizer report, a signal or a hang"
    INFIDELITY = "infidelity", "the model and the kernel disagree: one of the two is wrong"
    MISSING_CHECK = "missing-check", "the kernel accepts a call torch rejects"
    OVER_STRICT = "over-strict", "the kernel rejects a call torch accepts"
    WRONG_RESULT = "wrong-result", "both accept, but the output sizes or values differ"
    OVERFLOW = "overflow", "C arithmetic changed the answer the exact arithmetic gives"
    ORDERING = "ordering", "undefined behaviour before the check that rejects the call"
    TORCH_BUG = "torch-bug", "torch crashed, or its two paths (oneDNN on, off) disagree"
    ABI_VIOLATION = "abi-violation", "the target's result breaks its ABI (convcheck_abi.h)"
    TOOL_ERROR = "tool-error", "convcheck's own code failed on the case: never minimised"

    def __new__(cls, value: str, description: str) -> FindingKind:
        kind = str.__new__(cls, value)
        kind._value_ = value
        kind.description = description
        return kind

    @property
    def about_kernel(self) -> bool:
        """A torch-bug or a tool-error is reported, but it is not the kernel's to fix."""
        return self not in (FindingKind.TORCH_BUG, FindingKind.TOOL_ERROR)


# Tolerances of a value comparison: accumulation order differs between kernels.
_TOLERANCE = {"float64": 1e-9, "float32": 1e-4, "float16": 2e-2, "bfloat16": 5e-2}


@dataclass(frozen=True)
class Finding:
    kind: FindingKind
    signature: tuple[str, ...]  # plain strings, the kind first
    case: Case
    outcomes: dict[str, Outcome] = field(compare=False)
    explanation: str = field(compare=False, default="")

    def __post_init__(self) -> None:
        # A kind given as its corpus string is that kind; an unknown one is a ValueError.
        object.__setattr__(self, "kind", FindingKind(self.kind))

    @property
    def key(self) -> str:
        return " | ".join(self.signature)

    @property
    def about_kernel(self) -> bool:
        return self.kind.about_kernel

    def describe(self) -> str:
        return f"{self.kind}: {self.explanation}"


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


def findings(j: Judgement, explain_difference=None) -> list[Finding]:
    """Every disagreement among the outcomes of one case.

    ``explain_difference(case, revision, kernel, torch, verdict)`` returns a truthy value
    when an intentional difference explains why the kernel and torch disagree.
    """
    case, out = j.case, j.outcomes()
    found: list[Finding] = []

    def add(kind: FindingKind, signature: tuple[str, ...], explanation: str) -> None:
        found.append(Finding(kind, (kind.value, *signature), case, out, explanation))

    for mf in j.model_findings:
        add(FindingKind(mf.kind), (model.site_family(mf.site),), mf.detail)

    unjudged = _unjudged(j)
    for name, outcome in unjudged:
        if outcome.verdict == ABI_VIOLATION:
            add(FindingKind.ABI_VIOLATION, (outcome.check or "?",), f"{name}: {outcome.detail}")
        else:
            add(FindingKind.TOOL_ERROR, (name,), f"convcheck failed on {name}: {outcome.detail}")
    if unjudged:
        return found  # nothing the kernel said can be compared

    kernel = j.kernel
    if kernel is not None and kernel.verdict in (CRASH, HANG):
        # Where the model foresaw this crash, its step names the bug better than the C
        # function that happened to fault (a bias over-read faults in a per-dtype loader).
        foreseen = j.predicted(with_loops=j.native_run is not None)
        if foreseen.verdict == CRASH and foreseen.crash_kind == kernel.crash_kind:
            site = model.site_family(foreseen.crash_site)
        else:
            site = crash_site_family(kernel.crash_site)
        add(
            FindingKind.CRASH,
            (kernel.crash_kind or kernel.verdict, site),
            f"native {kernel.describe()}",
        )

    for name, actual, with_loops in (
        ("native", j.native_check, False),
        ("native_run", j.native_run, True),
    ):
        if actual is None:
            continue
        predicted = j.predicted(with_loops)
        if not predicted.agrees(actual):
            add(
                FindingKind.INFIDELITY,
                (predicted.category, actual.category),
                f"model predicts {predicted.describe()}, {name} gives {actual.describe()}",
            )

    verdict = j.torch
    if verdict is None:
        return found
    torch_outcome = verdict.outcome
    if torch_outcome.verdict in (CRASH, HANG):
        add(FindingKind.TORCH_BUG, (torch_outcome.category,), f"torch {torch_outcome.describe()}")
    elif verdict.torch_bug:
        # The bug's class is the part before the details; numbers vary from case to case.
        summary = re.sub(r"\d+", "N", verdict.torch_bug.split(";")[0])
        summary = re.sub(r"\[[N, ]*\]", "[...]", summary)
        add(FindingKind.TORCH_BUG, (summary,), verdict.torch_bug)
    if (
        kernel is None
        or kernel.verdict not in (ACCEPT, REJECT)
        or torch_outcome.verdict not in (ACCEPT, REJECT)
    ):
        return found
    if kernel.verdict == ACCEPT and _torch_inconsistent(verdict):
        # torch refuses only in one backend: its other path's answer is torch's (the
        # disagreement itself is the torch-bug above), not a check the kernel misses.
        torch_outcome = verdict.no_onednn
    if explain_difference is not None and explain_difference(
        case, j.revision, kernel, torch_outcome, verdict
    ):
        return found
    if kernel.verdict == ACCEPT and torch_outcome.verdict == REJECT:
        add(
            FindingKind.MISSING_CHECK,
            (torch_outcome.check,),
            f"kernel accepts, torch rejects: {torch_outcome.check}",
        )
    elif kernel.verdict == REJECT and torch_outcome.verdict == ACCEPT:
        add(
            FindingKind.OVER_STRICT,
            (kernel.check,),
            f"kernel rejects {kernel.check}, torch accepts",
        )
    elif kernel.verdict == ACCEPT:
        if kernel.out_sizes != torch_outcome.out_sizes:
            add(
                FindingKind.WRONG_RESULT,
                ("sizes",),
                f"kernel gives {list(kernel.out_sizes)}, torch {list(torch_outcome.out_sizes)}",
            )
        elif kernel.values is not None and torch_outcome.values is not None:
            why = values_differ(case.input.dtype, kernel.values, torch_outcome.values)
            if why:
                add(FindingKind.WRONG_RESULT, ("values",), why)
    return found


# A backend's own refusal, not a check of the call: oneDNN's, or the Empty backend's
# indexing of an empty weight.
BACKEND_REFUSALS = ("torch.onednn", "torch.empty_select", "torch.empty_broadcast")


def _torch_inconsistent(verdict) -> bool:
    """torch refuses the call in a backend of its own (``BACKEND_REFUSALS``), and its
    other path (oneDNN off) accepts it."""
    other = getattr(verdict, "no_onednn", None)
    return (
        verdict.outcome.check in BACKEND_REFUSALS and other is not None and other.verdict == ACCEPT
    )


def _unjudged(j: Judgement) -> list[tuple[str, Outcome]]:
    """The native answers that are no verdict: an ABI violation or a tool error."""
    return [
        (name, outcome)
        for name, outcome in (("native", j.native_check), ("native_run", j.native_run))
        if outcome is not None and outcome.verdict in (ABI_VIOLATION, TOOL_ERROR)
    ]
