"""The step runner every op's model runs on, and what a run answers.

A revision of an op is a tuple of *steps*, one per C function (or per block of the
kernel's body), in the C's order. A step reads the *call* (the op's view of a case as
the C sees it, made once per run), does its arithmetic through the ``Arith`` it is given,
and either returns (passed) or raises ``Reject`` with a check id. The runner turns that
into an outcome and keeps the trace. Nothing here knows which op it runs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from convcheck.fixedint import Arith, NarrowEvent, Op, UbEvent
from convcheck.frozen import frozen
from convcheck.outcome import REJECT, Outcome


class Reject(Exception):
    """Raised by a step: the kernel returns InvalidArgument with this check id."""

    def __init__(self, check: str) -> None:
        super().__init__(check)
        self.check = check


class Accept(Exception):
    """Raised by the early return on an empty out: the kernel returns before the loops."""


class Call(Protocol):
    """What a step reads: an op's own view of the case. The runner reads only the sizes
    the kernel gives out, for an accepted call's outcome."""

    out_sizes: list[int]


Step = Callable[[Any, Arith], None]


@dataclass(frozen=True)
class Revision:
    """One revision of an op's checks: its steps in the C's order, which of them run
    inside the loops (only the run entry with data reaches those), how a case
    becomes the call its steps read, and the check ids of each step."""

    name: str
    steps: tuple[Step, ...]
    loop_steps: frozenset[str]
    call: Callable[[Any], Call]
    # step name -> the check ids it raises, in the C's order (the documented order of
    # checks that signatures place a rejection in)
    checks: Mapping[str, tuple[str, ...]]


# ``StepTrace(...)`` without the Python frame of the named tuple's generated ``__new__``.
_new_tuple = tuple.__new__


class StepTrace(NamedTuple):
    """One step of a run (a named tuple: a run records one per step it reaches)."""

    name: str
    ops: tuple[Op, ...]
    result: str  # "ok", "reject <id>", "accept (empty out)"
    in_loops: bool


@frozen
class ModelRun:
    """One run of a revision's steps over one case, under one arithmetic."""

    revision: str
    exact: bool
    outcome: Outcome
    ub: tuple[UbEvent, ...]
    narrowing: tuple[NarrowEvent, ...]
    steps: tuple[StepTrace, ...]
    # Out's sizes as the steps left them: what a check entry, which runs no loop step,
    # answers where a loop step rejected the call.
    out_sizes: tuple[int, ...] = ()

    @property
    def reject_step(self) -> int | None:
        """Index of the step that rejected, if any."""
        if self.outcome.verdict != REJECT:
            return None
        return len(self.steps) - 1

    def first_ub(self, include_loops: bool = True) -> UbEvent | None:
        for event in self.ub:
            if include_loops or not self.steps[event.step].in_loops:
                return event
        return None


def run_steps(case: Any, revision: Revision, arith: Arith) -> ModelRun:
    call = revision.call(case)
    trace = arith.trace
    traces: list[StepTrace] = []
    outcome = None
    plan = _plan(revision.steps, revision.loop_steps)
    for index, (step, name, in_loops, passed) in enumerate(plan):
        arith.step_index = index  # the step its events record
        first_op = len(trace)
        try:
            step(call, arith)
        except Reject as r:
            outcome = Outcome.reject(r.check)
            result = f"reject {r.check}"
        except Accept:
            outcome = Outcome.accept(call.out_sizes)
            result = "accept (empty out)"
        else:
            if len(trace) == first_op:
                traces.append(passed)
                continue
            result = "ok"
        traces.append(_new_tuple(StepTrace, (name, tuple(trace[first_op:]), result, in_loops)))
        if outcome is not None:
            break
    if outcome is None:
        outcome = Outcome.accept(call.out_sizes)
    return ModelRun(
        revision.name,
        arith.exact,
        outcome,
        tuple(arith.ub),
        tuple(arith.narrowing),
        tuple(traces),
        tuple(call.out_sizes),
    )


@functools.cache
def _plan(
    steps: tuple[Step, ...], loop_steps: frozenset[str]
) -> tuple[tuple[Step, str, bool, StepTrace], ...]:
    """Each step with its name, whether it is in the loops, and its trace when it passes
    without arithmetic (most steps of most runs: one shared value)."""
    plan = []
    for step in steps:
        name = step.__name__
        in_loops = name in loop_steps
        plan.append((step, name, in_loops, StepTrace(name, (), "ok", in_loops)))
    return tuple(plan)


def either(first: Any, second: Any) -> Any:
    """C's ``first || second`` of two comparisons, both made already (nothing to skip).

    On the model's own values, Python's ``or``: a branch atheris' coverage of the model
    sees (without it, its campaigns found a fifth fewer findings). On the solver's
    (``SymBool``), one condition ``first | second``: ``or`` would fork on the first
    and then on the second, and its two passing sides would double every path after it,
    once per spatial dim (convolution's current, rank 5: 375 paths instead of 72).
    """
    if isinstance(first, bool):
        return first or second
    return first | second
