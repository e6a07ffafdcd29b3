"""The worker side of a wheel target whose op's kernel takes input tensors and writes its
outputs (the pooling ops, padding): it runs inside a sandbox worker process.

``init(config)`` loads the runtime and the op's *target module* (``config["target"]``),
which says how a case becomes a program: ``make_plan(case, limits)``, ``program(case,
plan, form)``, ``inputs(case)`` (the input tensors of a whole run) and ``classify(log)``
(its log map's). ``handle(request)`` judges one case: ``{"case": <case JSON>, "mode":
"check" | "run"}``, answered as every wheel target answers (``runtime``); a ``run`` also
answers with the outputs' values for small outputs. A process-killing case (SIGFPE: a
division by zero, INT64_MIN / -1) is left to kill the worker: the sandbox turns that into
a crash.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from convcheck import registry
from convcheck.case import Case
from convcheck.errors import ConvcheckError
from convcheck.executorch_wheel import runtime
from convcheck.executorch_wheel.memory import Limits


class _Config:
    case_type: type[Case]
    target: ModuleType
    limits = Limits()


_config = _Config()


def init(config: dict) -> None:
    runtime.init()
    _config.case_type = registry.get(config["op"]).case_type
    _config.target = importlib.import_module(config["target"])
    _config.limits = Limits(**config.get("limits", {}))


def handle(request: dict) -> dict:
    mode = request.get("mode", "check")
    if mode not in ("check", "run"):
        raise ConvcheckError(f"mode: expected 'check' or 'run', got {mode!r}")
    case = _config.case_type.from_json(request["case"])
    target = _config.target
    plan = target.make_plan(case, _config.limits)
    return runtime.judge(
        lambda form: target.program(case, plan, form),
        plan.whole,
        lambda: target.inputs(case),
        target.classify,
        _config.limits.max_values if mode == "run" else None,
    )
