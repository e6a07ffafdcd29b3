"""The pure-Python model of an op's argument checks, for each revision.

``run(case, revision)`` runs the revision's steps (the case's op's, ``convcheck.registry``)
under C arithmetic; with
``exact=True`` the same steps run over unbounded integers. ``classify`` compares the two
runs: an ``overflow`` is a call whose answer the machine's widths changed, an
``ordering`` is a call on which undefined behaviour happened before the check that
rejects it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from convcheck import registry
from convcheck.fixedint import (
    DIVISION_BY_ZERO,
    HEAP_OVERREAD,
    NULL_CALL,
    SIGNED_OVERFLOW,
    WORK_PAST_LIMIT,
    Arith,
    Exact,
    Wrapping,
)
from convcheck.outcome import Outcome
from convcheck.steps import ModelRun, Revision, StepTrace, run_steps
from convcheck.validation import check_choice

# Every op has both: ``legacy`` is the kernel as it is, bugs included; ``current`` the
# fixed semantics.
REVISIONS = ("legacy", "current")

# How each kind of undefined behaviour shows in a build with ASan and UBSan that halt.
NATIVE_CRASH_KIND = {
    SIGNED_OVERFLOW: "signed-integer-overflow",
    DIVISION_BY_ZERO: "division-by-zero",
    NULL_CALL: "SEGV null",
    HEAP_OVERREAD: "heap-buffer-overflow READ",
    WORK_PAST_LIMIT: "work past limit",  # the kernel's own halt, not a sanitizer's
}

__all__ = [
    "REVISIONS",
    "ModelFinding",
    "Revision",
    "ModelRun",
    "StepTrace",
    "classify",
    "overflow_site",
    "predict",
    "run",
]


def check_revision(revision: str) -> str:
    """The one check of a revision name, for every place that takes one."""
    return check_choice("revision", revision, REVISIONS)


def revision_of(case, revision: str) -> Revision:
    """The steps of ``revision`` of the op ``case`` is a call of."""
    key = (type(case), revision)
    found = _revisions.get(key)
    if found is None:
        found = _revisions[key] = registry.op_of(case).revisions[check_revision(revision)]
    return found


def revision_named(revision: str, op: str = registry.DEFAULT_OP) -> Revision:
    """The steps of ``revision`` of the op called ``op``."""
    return registry.get(op).revisions[check_revision(revision)]


# (case type, revision name) -> Revision: asked for on every run of the model.
_revisions: dict[tuple[type, str], Revision] = {}


def run(case, revision: str = "current", exact: bool = False) -> ModelRun:
    return _run(case, revision, Exact() if exact else Wrapping())


def _run(case, revision: str, arith: Arith) -> ModelRun:
    return run_steps(case, revision_of(case, revision), arith)


def predict(model_run: ModelRun, with_loops: bool) -> Outcome:
    """What the sanitized C kernel answers: it halts at the first undefined behaviour.

    ``with_loops`` is the run entry (data, loops); without, the check-only entry, where
    the loop steps (the op's revision's ``loop_steps``: its loads and reads, and the
    guards some loops have) never happen: a call a guard refuses is accepted there.
    """
    event = model_run.first_ub(include_loops=with_loops)
    if event is not None:
        return Outcome.crashed(NATIVE_CRASH_KIND[event.kind], event.site)
    step = model_run.reject_step
    if not with_loops and step is not None and model_run.steps[step].in_loops:
        return Outcome.accept(model_run.out_sizes)
    return model_run.outcome


def site_family(site: str) -> str:
    """The same bug in another spatial dim is the same bug: ``dim1`` -> ``dim*``."""
    return re.sub(r"dim\d+", "dim*", site)


@dataclass(frozen=True)
class ModelFinding:
    kind: str  # "overflow" or "ordering"
    site: str
    detail: str

    def describe(self) -> str:
        return f"{self.kind} at {self.site}: {self.detail}"


def overflow_site(run: ModelRun) -> str:
    """Where the C arithmetic first left the exact one: the first operation that had
    undefined behaviour, narrowed or wrapped (an unsigned wrap is no event, yet it is
    where a size computed in unsigned arithmetic first goes wrong)."""
    for step in run.steps:
        for op in step.ops:
            if op.flag:
                return op.site
    return "?"


def classify(case, revision: str = "current") -> tuple[ModelRun, ModelRun, list[ModelFinding]]:
    """Run wrapping and exact; return both runs and the overflow/ordering findings.

    Most calls never take a value outside its C type: their exact run is the C run, so
    it runs once (``Arith.left_width``).
    """
    arith = Wrapping()
    wrapped = _run(case, revision, arith)
    if arith.left_width:
        exact = run(case, revision, exact=True)
    else:
        # ``replace(wrapped, exact=True)``, without its walk over the fields
        exact = ModelRun(
            revision,
            True,
            wrapped.outcome,
            wrapped.ub,
            wrapped.narrowing,
            wrapped.steps,
            wrapped.out_sizes,
        )
    return wrapped, exact, compare(wrapped, exact)


def compare(wrapped: ModelRun, exact: ModelRun) -> list[ModelFinding]:
    """The overflow and ordering findings of one call's C and exact runs."""
    findings = []
    if not wrapped.outcome.same_answer(exact.outcome):
        findings.append(
            ModelFinding(
                "overflow",
                overflow_site(wrapped),
                f"C gives {wrapped.outcome.describe()}, exact gives {exact.outcome.describe()}",
            )
        )
    reject_step = exact.reject_step
    if reject_step is not None:
        early = [e for e in wrapped.ub if e.step < reject_step]
        if early:
            first = early[0]
            findings.append(
                ModelFinding(
                    "ordering",
                    first.site,
                    f"{first.describe()} before {exact.outcome.check} rejects "
                    f"(step {exact.steps[reject_step].name})",
                )
            )
    return findings
