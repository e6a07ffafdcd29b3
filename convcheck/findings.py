"""Findings: the disagreements among one case's outcomes, each with a signature.

``findings`` is the table that turns a ``Judgement`` (every judge's answer for one case)
into zero or more ``Finding``s. A finding's *signature* is its root cause: what
deduplication and minimisation preserve, and what names its corpus file.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np

from convcheck import model, registry
from convcheck.case import Case
from convcheck.judgement import Judgement
from convcheck.outcome import ABI_VIOLATION, ACCEPT, CRASH, HANG, REJECT, TOOL_ERROR, Outcome


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

    description: str

    # ``description``'s default is for mypy, which reads a lookup (``FindingKind("crash")``)
    # as a call of ``__new__``; every member gives one.
    def __new__(cls, value: str, description: str = "") -> FindingKind:
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


class Signed:
    """What a finding and a corpus entry are known by: a signature, and the signatures
    merged into it (one bug showing in several ways on the same minimised call)."""

    signature: tuple[str, ...]
    also: tuple[tuple[str, ...], ...]

    @property
    def key(self) -> str:
        return " | ".join(self.signature)

    @property
    def keys(self) -> set[str]:
        """Every signature this stands for: its own and the ones merged into it."""
        return {" | ".join(s) for s in (self.signature, *self.also)}


@dataclass(frozen=True)
class Finding(Signed):
    kind: FindingKind
    signature: tuple[str, ...]  # plain strings, the kind first
    case: Case
    outcomes: dict[str, Outcome] = field(compare=False)
    explanation: str = field(compare=False, default="")
    # The signatures of findings merged into this one: one bug showing in several ways on
    # the same minimised call (``Campaign.minimize_all``).
    also: tuple[tuple[str, ...], ...] = field(compare=False, default=())

    def __post_init__(self) -> None:
        # A kind given as its corpus string is that kind; an unknown one is a ValueError.
        object.__setattr__(self, "kind", FindingKind(self.kind))

    @property
    def about_kernel(self) -> bool:
        return self.kind.about_kernel

    def describe(self) -> str:
        return f"{self.kind}: {self.explanation}"


# A per-dtype instance of one function (``load_float32``, ``store_bfloat16``): one bug.
_DTYPE_PART = re.compile(
    r"_(?:u?int(?:8|16|32|64)|float(?:16|32|64)|bfloat16|half|double|bool)(?=_|\b|$)"
)
_QUALIFIERS = {"const", "volatile", "&", "&&", "noexcept"}
_LOCATION = re.compile(r"\s+(\S+:\d+)$")
# The longest crash site a signature keeps: a C++ name folded is short; a stranger is cut.
_SITE_LIMIT = 80


def _strip_bracketed(text: str, opening: str, closing: str) -> str:
    """``text`` without anything between ``opening`` and its matching ``closing``."""
    kept, depth = [], 0
    for char in text:
        if char == opening:
            depth += 1
        elif char == closing and depth:
            depth -= 1
        elif not depth:
            kept.append(char)
    return "".join(kept)


def function_family(function: str) -> str:
    """A function's name with its instances folded: per-dtype C twins, and C++ template
    arguments, return type, parameter lists and qualifiers (a demangled
    ``void ns::conv<float>(Tensor const&) const`` is ``ns::conv``)."""
    name = function.replace("(anonymous namespace)", "{anonymous}")
    name = _strip_bracketed(name, "<", ">")
    name = _strip_bracketed(name, "(", ")")
    # The name is the last word but the qualifiers: a return type comes before it.
    words = [w for w in name.split() if w not in _QUALIFIERS]
    name = words[-1] if words else ""
    name = _DTYPE_PART.sub("", name)
    return model.site_family(name)[:_SITE_LIMIT] or "?"


def split_site(site: str | None) -> tuple[str, str]:
    """A sanitizer site ``function file:line`` as (function, location); either may be ""."""
    site = (site or "").strip()
    match = _LOCATION.search(site)
    if match:
        return site[: match.start()], match[1]
    if re.fullmatch(r"\S+:\d+", site):
        return "", site
    return site, ""


def crash_site_family(site: str | None) -> str:
    """A sanitizer site is ``function file:line``; the function's family names the bug
    (a site with no function keeps its file and line)."""
    function, location = split_site(site)
    if function:
        return function_family(function)
    return location or "?"


def short_site(site: str | None) -> str:
    """A crash site for people, short: the function's family and where it is."""
    function, location = split_site(site)
    return " ".join(part for part in (function and function_family(function), location) if part)


def values_differ(dtype: str, a: tuple[float, ...], b: tuple[float, ...]) -> str | None:
    if len(a) != len(b):
        return f"{len(a)} values against {len(b)}"
    # Most runs the two judges agree on give equal values: no need for numpy (whose call
    # costs more than the comparison), unless a NaN, equal to itself only by identity,
    # meets an exact dtype.
    if a == b and (dtype in _TOLERANCE or all(v == v for v in a)):
        return None
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
    case = j.case
    found: list[Finding] = []
    out: dict[str, Outcome] = {}  # every judge's, gathered at the first finding (most have none)

    def add(kind: FindingKind, signature: tuple[str, ...], explanation: str) -> None:
        signature = (kind.value, *signature)
        if all(f.signature != signature for f in found):
            if not out:
                out.update(j.outcomes())
            found.append(Finding(kind, signature, case, out, explanation))

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
    parted = False
    if kernel is not None and kernel.verdict in (CRASH, HANG):
        foreseen = j.predicted(with_loops=j.native_run is not None)
        what = "hang" if kernel.verdict == HANG else f"crash {kernel.crash_kind}"
        what = f"native {what} at {short_site(kernel.crash_site) or '?'}"
        # Where the model foresaw this crash, its step names the bug better than the C
        # function that happened to fault (a bias over-read faults in a per-dtype loader).
        if foreseen.verdict == CRASH and foreseen.crash_kind == kernel.crash_kind:
            assert foreseen.crash_kind is not None and foreseen.crash_site is not None
            add(
                FindingKind.CRASH,
                (foreseen.crash_kind, model.site_family(foreseen.crash_site)),
                f"{what}, as the model predicts",
            )
        elif _passed_rejection(j, kernel, foreseen):
            # The kernel went past a check it should have applied: that check is the bug,
            # the crash what came of it (one finding, however it crashed afterwards).
            parted = True
            assert foreseen.check is not None
            add(
                FindingKind.INFIDELITY,
                (foreseen.check, "kernel passes"),
                f"model predicts {foreseen.describe()}; the kernel passes it: {what}",
            )
        else:
            add(
                FindingKind.CRASH,
                (kernel.crash_kind or kernel.verdict, crash_site_family(kernel.crash_site)),
                f"{what}; the model predicts {foreseen.describe()}",
            )

    for name, actual, with_loops in (
        ("native", j.native_check, False),
        ("native_run", j.native_run, True),
    ):
        if actual is None:
            continue
        predicted = j.predicted(with_loops)
        if predicted.agrees(actual):
            continue
        parted = True
        where = parting(predicted, actual, j.revision, j.case.OP)
        if where is not None:
            add(
                FindingKind.INFIDELITY,
                where,
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
    if kernel is None and j.model_is_kernel:
        kernel = j.predicted(with_loops=False)
    # Where the kernel parts from the model, the kernel-torch disagreement on the same call
    # is that bug again: torch judges the model's semantics on calls the kernel implements.
    if (
        parted
        or kernel is None
        or kernel.verdict not in (ACCEPT, REJECT)
        or torch_outcome.verdict not in (ACCEPT, REJECT)
        # Both reject (most calls): no finding below, whatever the difference table says.
        or kernel.verdict == torch_outcome.verdict == REJECT
    ):
        return found
    if kernel.verdict == ACCEPT and _torch_inconsistent(verdict):
        # torch refuses only in one backend: its other path's answer is torch's (the
        # disagreement itself is the torch-bug above), not a check the kernel misses.
        assert verdict.no_onednn is not None
        torch_outcome = verdict.no_onednn
    if explain_difference is not None and explain_difference(
        case, j.revision, kernel, torch_outcome, verdict
    ):
        return found
    if kernel.verdict == ACCEPT and torch_outcome.verdict == REJECT:
        check = torch_outcome.check
        assert check is not None  # a rejection's
        add(FindingKind.MISSING_CHECK, (check,), f"kernel accepts, torch rejects: {check}")
    elif kernel.verdict == REJECT and torch_outcome.verdict == ACCEPT:
        check = kernel.check
        assert check is not None  # a rejection's
        add(FindingKind.OVER_STRICT, (check,), f"kernel rejects {check}, torch accepts")
    elif kernel.verdict == ACCEPT:
        if kernel.out_sizes != torch_outcome.out_sizes:
            assert kernel.out_sizes is not None and torch_outcome.out_sizes is not None
            add(
                FindingKind.WRONG_RESULT,
                ("sizes",),
                f"kernel gives {list(kernel.out_sizes)}, torch {list(torch_outcome.out_sizes)}",
            )
        elif kernel.values is not None and torch_outcome.values is not None:
            why = values_differ(case.tensors()[0].dtype, kernel.values, torch_outcome.values)
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


@functools.cache
def _positions(revision: str, op: str) -> dict[str, tuple[int, int]]:
    """Where each check id and each step sits in ``op``'s revision's order: (step, check)."""
    steps = model.revision_named(revision, op)
    found: dict[str, tuple[int, int]] = {}
    for i, step in enumerate(steps.steps):
        found[step.__name__] = (i, 0)
        for j, check in enumerate(steps.checks.get(step.__name__, ()), start=1):
            found[check] = (i, j)
    found["accept"] = (len(steps.steps), 0)
    return found


def point(
    outcome: Outcome, revision: str, op: str = registry.DEFAULT_OP
) -> tuple[tuple[int, int], str] | None:
    """Where in the order of checks of ``op``'s revision an answer stops, and its name
    there: a rejection at its check id, undefined behaviour at the start of its site's
    step (named by the site's family), an acceptance after every step. None for a check
    id or a site the revision does not have (another revision's, a foreign target's own
    name, a site not named after its step)."""
    positions = _positions(model.check_revision(revision), op)
    if outcome.verdict == REJECT:
        name = outcome.check or ""
        key = name
    elif outcome.verdict == CRASH:
        name = model.site_family(outcome.crash_site or "")
        key = name.split(".")[0]
    elif outcome.verdict == ACCEPT:
        name = key = "accept"
    else:
        return None
    position = positions.get(key)
    return None if position is None else (position, name)


def parting(
    predicted: Outcome, actual: Outcome, revision: str, op: str = registry.DEFAULT_OP
) -> tuple[str, str] | None:
    """Where the kernel parts from the model, as an infidelity's signature: the first point
    of the revision's order of checks (docs/checks.md) at which their answers differ, and
    which way. The kernel's own check id is never part of it (a target names its checks as
    it likes); a kernel that crashed or hung has its crash finding instead (None).

    - it rejects at a check before the model's stop: (that check, "kernel rejects");
    - it passes the point where the model stops (a check id, or a UB site the kernel
      survives), rejecting later or accepting: (the model's point, "kernel passes");
    - it rejects with an id this revision does not have: (the model's point, "kernel
      rejects another id");
    - both accept: ("output_sizes", "sizes differ").
    """
    if actual.verdict in (CRASH, HANG):
        return None
    if predicted.verdict == ACCEPT and actual.verdict == ACCEPT:
        return ("output_sizes", "sizes differ")
    model_point = point(predicted, revision, op)
    kernel_point = point(actual, revision, op)
    if model_point is None:  # a target's own expectation, outside the revision's order
        return (predicted.category, "kernel differs")
    if kernel_point is None:
        return (model_point[1], "kernel rejects another id")
    if kernel_point[0] < model_point[0]:
        return (kernel_point[1], "kernel rejects")
    if kernel_point[0] > model_point[0]:
        return (model_point[1], "kernel passes")
    return (model_point[1], "kernel differs")


def _passed_rejection(j: Judgement, kernel: Outcome, predicted: Outcome) -> bool:
    """Did the crashed kernel pass the check at which the model rejects the call? Surely
    on the run entry after the check entry accepted the call (the loops crashed), and on
    the check entry when the C function that crashed is that check's step or a later one:
    in its own step, whatever crashed ran where the check should have stopped the call
    (our kernel names its steps ``step_<name>``; a target's own functions place nothing)."""
    if predicted.verdict != REJECT:
        return False
    checked = j.native_check
    if kernel is j.native_run and checked is not None and checked.verdict == ACCEPT:
        return True
    step = re.sub(r"^(?:cc_)?step_", "", split_site(kernel.crash_site)[0])
    op = j.case.OP
    crashed = point(Outcome.crashed(kernel.crash_kind or "", step), j.revision, op)
    rejected = point(predicted, j.revision, op)
    return crashed is not None and rejected is not None and crashed[0][0] >= rejected[0][0]


def _unjudged(j: Judgement) -> list[tuple[str, Outcome]]:
    """The native answers that are no verdict: an ABI violation or a tool error."""
    return [
        (name, outcome)
        for name, outcome in (("native", j.native_check), ("native_run", j.native_run))
        if outcome is not None and outcome.verdict in (ABI_VIOLATION, TOOL_ERROR)
    ]
