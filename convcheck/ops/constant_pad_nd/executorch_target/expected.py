"""What ExecuTorch 1.5.1 from PyPI should answer for a constant_pad_nd case, according to
the model: ``convcheck.executorch_wheel.expected``'s differences, nothing of its own."""

from __future__ import annotations

from convcheck import model
from convcheck.case import Case
from convcheck.executorch_wheel import expected
from convcheck.executorch_wheel.memory import Limits
from convcheck.ops.constant_pad_nd.executorch_target.program import make_plan
from convcheck.outcome import Outcome

# Steps that reject after the resize of out, the loops' guards among them: a probe never
# gets to them.
AFTER_RESIZE = ("value", "padding_loops")


def expected_outcome(case: Case, limits: Limits | None = None) -> Outcome:
    """The outcome the wheel judge with ``limits`` should report for ``case``."""
    plan = make_plan(case, limits or Limits())
    run = model.run(case, "legacy")
    return expected.expected_outcome(run, plan.whole, plan.out_sizes, AFTER_RESIZE)
