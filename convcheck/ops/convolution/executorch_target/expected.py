"""What ExecuTorch 1.5.1 from PyPI should answer for a convolution, according to the
model: its unsanitized differences are ``convcheck.executorch_wheel.expected``'s, and one
of its own: a read past the bias crashes nothing, and the judge sees it in the values
(``bias-overread (values)``).
"""

from __future__ import annotations

from convcheck import model
from convcheck.executorch_wheel import expected
from convcheck.fixedint import HEAP_OVERREAD
from convcheck.ops.convolution.case import ConvolutionCase
from convcheck.ops.convolution.executorch_target._plan import Limits, make_plan
from convcheck.ops.convolution.executorch_target.worker import OVERREAD_KIND
from convcheck.outcome import Outcome

CRASHES = {**expected.UNSANITIZED, HEAP_OVERREAD: OVERREAD_KIND}
_AFTER_RESIZE = ("dtype_switch",)  # steps that reject after the out resize


def expected_outcome(case: ConvolutionCase, limits: Limits | None = None) -> Outcome:
    """The outcome ``ExecutorchJudge(limits=limits)`` should report for ``case``."""
    plan = make_plan(case, limits or Limits())
    run = model.run(case, "legacy")
    return expected.expected_outcome(run, plan.whole, plan.out_sizes, _AFTER_RESIZE, CRASHES)
