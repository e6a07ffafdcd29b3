"""What ExecuTorch 1.5.1 from PyPI should answer for a case, according to the model.

The model's ``legacy`` revision is ExecuTorch's portable kernel; ``model.predict`` says
what a build with ASan and UBSan (halting on the first report) answers. The pip build has
no sanitizers, so its answer differs in known ways, and ``expected_outcome`` makes them:

* signed integer overflow is silent: the call goes on with the wrapped value, except
  INT64_MIN / -1, which traps as a division by zero does: SIGFPE;
* a call through a null function pointer: SIGSEGV;
* loops past a work limit, which our kernel halts, spin on: a hang;
* what an op's target sees otherwise (convolution's bias over-read, in the values) is
  the op's to say (``crashes``);
* a case too large to run whole is probed: only the steps up to the out resize happen
  (when out is not empty), so those after it (``after_resize``), and the loops, and what
  they would do, do not.

The engine compares this with the wheel judge's outcome by verdict, check id, out sizes
and crash kind (``Outcome.agrees``); a disagreement is an infidelity: the model, or our
reading of ExecuTorch, is wrong.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from convcheck.fixedint import (
    DIVISION_BY_ZERO,
    INT64_MIN,
    NULL_CALL,
    SIGNED_OVERFLOW,
    WORK_PAST_LIMIT,
    UbEvent,
)
from convcheck.outcome import REJECT, Outcome
from convcheck.steps import ModelRun

# Undefined behaviour in the model -> what the unsanitized build does (None: nothing).
UNSANITIZED: Mapping[str, str | None] = {
    SIGNED_OVERFLOW: None,
    DIVISION_BY_ZERO: "SIGFPE",
    NULL_CALL: "SIGSEGV",
}


def crash_of(event: UbEvent, crashes: Mapping[str, str | None] = UNSANITIZED) -> str | None:
    """How the unsanitized build dies of ``event``, or None when it goes on."""
    if event.kind == SIGNED_OVERFLOW and event.operands == (INT64_MIN, -1):
        return "SIGFPE"  # the x86 division instruction traps on it
    return crashes[event.kind]


def expected_outcome(
    run: ModelRun,
    whole: bool,
    out_sizes: tuple[int, ...] | None,
    after_resize: tuple[str, ...],
    crashes: Mapping[str, str | None] = UNSANITIZED,
) -> Outcome:
    """The wheel's outcome for the legacy ``run`` of a case, run whole or probed, whose
    out the legacy kernel sizes ``out_sizes`` (its plan's)."""
    for event in run.ub:
        if not whole and run.steps[event.step].in_loops:
            continue
        if event.kind == WORK_PAST_LIMIT:
            return Outcome.hung()  # the wheel's loops spin on where ours halt
        kind = crash_of(event, crashes)
        if kind is not None:
            return Outcome.crashed(kind, event.site)
    outcome = run.outcome
    if not whole and outcome.verdict == REJECT and run.steps[-1].name in after_resize:
        assert out_sizes is not None  # the kernel computed them, to get there
        # The probe stops at the resize, which the kernel got past: it sees an accept.
        # An empty out fits the capacity of 0: the kernel goes on, and rejects there.
        if math.prod(out_sizes) > 0:
            return Outcome.accept(out_sizes)
    return outcome
