"""What ExecuTorch 1.5.1 from PyPI should answer for a pooling case, according to the
model: ``convcheck.executorch_wheel.expected``'s differences, and one the loops add. A
window's int64 sum that overflows halts the sanitized kernel, so the model stops there;
the wheel goes on with the wrapped sum, and where that is INT64_MIN and the divisor an
override of -1, the division traps."""

from __future__ import annotations

from convcheck import model
from convcheck.case import Case
from convcheck.executorch_wheel import expected
from convcheck.executorch_wheel.memory import Limits
from convcheck.fixedint import INT64_MIN, SIGNED_OVERFLOW
from convcheck.ops.pooling.checks import Call
from convcheck.ops.pooling.executorch_target.program import make_plan
from convcheck.ops.pooling.legacy import dim_profiles
from convcheck.outcome import Outcome

# Steps that reject after the resize of out: a probe never gets to them.
AFTER_RESIZE = ("resize_indices", "dtype_switch")
SUM_SITE, DIVIDE_SITE = "loops.plus", "loops.divide"


def expected_outcome(case: Case, limits: Limits | None = None) -> Outcome:
    """The outcome the pooling wheel judge with ``limits`` should report for ``case``."""
    plan = make_plan(case, limits or Limits())
    run = model.run(case, "legacy")
    outcome = expected.expected_outcome(run, plan.whole, plan.out_sizes, AFTER_RESIZE)
    wrapped = any(e.site == SUM_SITE and e.kind == SIGNED_OVERFLOW for e in run.ub)
    if plan.whole and outcome.verdict != "crash" and wrapped and _wrapped_sum_traps(case, run):
        return Outcome.crashed("SIGFPE", DIVIDE_SITE)
    return outcome


def _wrapped_sum_traps(case: Case, run) -> bool:
    """Whether a window's wrapped sum is INT64_MIN where the divisor is -1."""
    if getattr(case, "divisor_override", None) != -1:
        return False
    call = Call(case)
    call.out_sizes = list(run.outcome.out_sizes or ())
    fill: int = case.int64_fill  # type: ignore[attr-defined]  # the sum wrapped: it is set
    for _, rows in dim_profiles(call, 0):
        for _, columns in dim_profiles(call, 1):
            total = (fill * rows * columns - INT64_MIN) % 2**64 + INT64_MIN
            if rows and columns and total == INT64_MIN:
                return True
    return False
