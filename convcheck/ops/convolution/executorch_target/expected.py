"""What ExecuTorch 1.5.1 from PyPI should answer for a case, according to the model.

The model's ``legacy`` revision is ExecuTorch's portable kernel; ``model.predict`` says
what a build with ASan and UBSan (halting on the first report) answers. The pip build has
no sanitizers, so its answer differs in known ways, and ``expected_outcome`` makes them:

* signed integer overflow is silent: the call goes on with the wrapped value;
* a division by zero traps: SIGFPE;
* a call through the null bias loader: SIGSEGV;
* a read past the bias: nothing crashes, and the judge sees it in the values
  (``bias-overread (values)``);
* a case too large to run whole is probed (``_plan.py``): only the steps up to the out
  resize happen, so the dtype switch and the loops, and what they would do, do not.

The engine compares this with ``ExecutorchJudge``'s outcome by verdict, check id, out
sizes and crash kind (``Outcome.agrees``); a disagreement is an infidelity: the
model, or our reading of ExecuTorch, is wrong.
"""

from __future__ import annotations

from convcheck import model
from convcheck.fixedint import DIVISION_BY_ZERO, HEAP_OVERREAD, NULL_CALL, SIGNED_OVERFLOW
from convcheck.ops.convolution.case import ConvolutionCase
from convcheck.ops.convolution.executorch_target._plan import Limits, make_plan
from convcheck.ops.convolution.executorch_target.worker import OVERREAD_KIND
from convcheck.outcome import REJECT, Outcome

# Undefined behaviour in the model -> what the unsanitized build does (None: nothing).
UNSANITIZED = {
    SIGNED_OVERFLOW: None,
    DIVISION_BY_ZERO: "SIGFPE",
    NULL_CALL: "SIGSEGV",
    HEAP_OVERREAD: OVERREAD_KIND,
}
_AFTER_RESIZE = ("dtype_switch",)  # steps that reject after the out resize


def expected_outcome(case: ConvolutionCase, limits: Limits | None = None) -> Outcome:
    """The outcome ``ExecutorchJudge(limits=limits)`` should report for ``case``."""
    run = model.run(case, "legacy")
    plan = make_plan(case, limits or Limits())
    for event in run.ub:
        kind = UNSANITIZED[event.kind]
        if kind is None or (not plan.whole and run.steps[event.step].in_loops):
            continue
        return Outcome.crashed(kind, event.site)
    outcome = run.outcome
    if not plan.whole and outcome.verdict == REJECT and run.steps[-1].name in _AFTER_RESIZE:
        # The probe stops at the resize, which the kernel got past: it sees an accept.
        assert plan.out_sizes is not None  # the kernel computed them, to get there
        return Outcome.accept(plan.out_sizes)
    return outcome
