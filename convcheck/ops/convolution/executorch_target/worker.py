"""The worker side of the ExecuTorch judge: runs inside a sandbox worker process.

``init(config)`` loads the runtime (``convcheck.executorch_wheel.runtime``);
``handle(request)`` judges one case. A request is ``{"case": <case JSON>, "mode": "check"
| "run"}``; the answer is ``{"verdict", "check", "out_sizes", "values", "crash", "detail",
"form"}``.

Per case: a program is crafted (``_craft.py``), loaded from bytes and called. A whole run
gets deterministic inputs (``convcheck.values.logical_values``, laid out by dim order);
when it accepts and the plan put a canary after the bias, it runs once more with other
canary values: if out changes, the kernel read past the bias ("bias-overread (values)":
the pip build has no sanitizer to say so). A probe (too large to run whole) reports the
checks up to the out resize. A process-killing case (SIGFPE, SIGSEGV, abort) is left to
kill the worker: the sandbox turns that into a crash.
"""

from __future__ import annotations

from convcheck.case import TensorSpec
from convcheck.errors import ConvcheckError
from convcheck.executorch_wheel import runtime
from convcheck.executorch_wheel.runtime import WHOLE
from convcheck.ops.convolution.case import ConvolutionCase
from convcheck.ops.convolution.executorch_target import logs
from convcheck.ops.convolution.executorch_target._craft import program
from convcheck.ops.convolution.executorch_target._plan import Limits, Plan, make_plan
from convcheck.values import logical_values

OVERREAD_KIND = "bias-overread (values)"
# The two canary fillings: any difference between the two runs' outputs was read from
# them. 100 is exact in every dtype (uint8 and bfloat16 included) and stays visible after
# conversion to the compute dtype.
_CANARY_VALUES = (0.0, 100.0)
_limits = Limits()


def init(config: dict) -> None:
    global _limits
    runtime.init()
    _limits = Limits(**config.get("limits", {}))


def handle(request: dict) -> dict:
    mode = request.get("mode", "check")
    if mode not in ("check", "run"):
        raise ConvcheckError(f"mode: expected 'check' or 'run', got {mode!r}")
    case = ConvolutionCase.from_json(request["case"])
    plan = make_plan(case, _limits)
    if plan.whole:
        return _whole(case, plan, want_values=mode == "run")
    return _probe(case, plan)


def _input(spec: TensorSpec, role: str):
    return runtime.input_tensor(spec, logical_values(spec, role))


# -- whole runs and probes ---------------------------------------------------------------


def _whole(case: ConvolutionCase, plan: Plan, want_values: bool) -> dict:
    pte, roles = program(case, plan, WHOLE)
    specs = {"input": case.input, "weight": case.weight}
    if case.bias is not None:  # (only then is there a "bias" role, and a "canary" after it)
        specs["bias"] = case.bias
    inputs = [
        runtime.filled(specs["bias"].dtype, plan.canary, _CANARY_VALUES[0])
        if role == "canary"
        else _input(specs[role], role)
        for role in roles
    ]
    ran = runtime.run_whole(pte, inputs, logs.classify, lambda: _probe(case, plan))
    if isinstance(ran, dict):
        return ran
    method, outputs = ran
    out = outputs[0]
    sizes = list(out.shape)
    if "canary" in roles and out.numel() > 0:
        inputs[-1] = runtime.filled(specs["bias"].dtype, plan.canary, _CANARY_VALUES[1])
        again, log, error = runtime.call(method, inputs)
        if error is not None:
            raise ConvcheckError(f"the second run failed where the first passed: {error}")
        changed = _changed_channels(out, again[0])
        if changed:
            detail = (
                f"bias of {specs['bias'].sizes[0]} for {sizes[1]} out channels: out channels "
                f"{changed[0]}..{changed[-1]} follow the bytes after it"
            )
            return runtime.answer(
                "crash", WHOLE, crash={"kind": OVERREAD_KIND, "site": "bias"}, detail=detail
            )
    values = None
    if want_values and out.numel() <= _limits.max_values:
        values = runtime.as_floats(out)
    return runtime.answer("accept", WHOLE, out_sizes=sizes, values=values)


def _changed_channels(first, second) -> list[int]:
    torch = runtime.torch()
    if torch.equal(first, second):
        return []
    differs = (first != second).transpose(0, 1).reshape(first.shape[1], -1).any(dim=1)
    return [int(i) for i in torch.nonzero(differs).flatten()]


def _probe(case: ConvolutionCase, plan: Plan) -> dict:
    return runtime.probe(lambda form: program(case, plan, form)[0], logs.classify)
