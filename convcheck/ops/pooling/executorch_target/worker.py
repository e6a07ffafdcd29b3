"""The worker side of the pooling ops' wheel judge: runs inside a sandbox worker process.

``init(config)`` loads the runtime and learns its op; ``handle(request)`` judges one case:
``{"case": <case JSON>, "mode": "check" | "run"}``, answered as every wheel target answers
(``convcheck.executorch_wheel.runtime``). A whole run's input holds the small values
every run holds (``convcheck.values``), or avg_pool2d's ``int64_fill`` in every element;
a ``run`` answers with out's values (and the indices after them) for small outputs. A
case too large to run whole is probed. A process-killing case (SIGFPE: a division by
zero, INT64_MIN / -1) is left to kill the worker: the sandbox turns that into a crash.
"""

from __future__ import annotations

import numpy as np

from convcheck import registry
from convcheck.case import Case
from convcheck.errors import ConvcheckError
from convcheck.executorch_wheel import runtime
from convcheck.executorch_wheel.memory import Limits
from convcheck.executorch_wheel.runtime import WHOLE
from convcheck.ops.pooling.executorch_target.logs import classify
from convcheck.ops.pooling.executorch_target.program import Plan, make_plan, program
from convcheck.values import logical_values


class _Config:
    case_type: type[Case]
    limits = Limits()


_config = _Config()


def init(config: dict) -> None:
    runtime.init()
    _config.case_type = registry.get(config["op"]).case_type
    _config.limits = Limits(**config.get("limits", {}))


def handle(request: dict) -> dict:
    mode = request.get("mode", "check")
    if mode not in ("check", "run"):
        raise ConvcheckError(f"mode: expected 'check' or 'run', got {mode!r}")
    case = _config.case_type.from_json(request["case"])
    plan = make_plan(case, _config.limits)
    if not plan.whole:
        return _probe(case, plan)
    ran = runtime.run_whole(
        program(case, plan, WHOLE), [_input(case)], classify, lambda: _probe(case, plan)
    )
    if isinstance(ran, dict):
        return ran
    _, outputs = ran
    values = None
    if mode == "run" and outputs[0].numel() <= _config.limits.max_values:
        values = [v for tensor in outputs for v in runtime.as_floats(tensor)]
    return runtime.answer("accept", WHOLE, out_sizes=list(outputs[0].shape), values=values)


def _input(case: Case):
    spec = case.input  # type: ignore[attr-defined]
    fill = getattr(case, "int64_fill", None)
    if fill is not None and spec.dtype == "int64":
        return runtime.input_tensor(spec, np.full(spec.sizes, fill, dtype=np.int64))
    return runtime.input_tensor(spec, logical_values(spec, "input"))


def _probe(case: Case, plan: Plan) -> dict:
    return runtime.probe(lambda form: program(case, plan, form), classify)
