"""A constant_pad_nd case as the program that makes ExecuTorch 1.5.1 call its kernel with
it, and whether that program runs whole or is probed (``convcheck.executorch_wheel.plan``).

As ``to_executorch`` lays out the call with the input as the program's one input: the
input, out, the pad's ``Int`` values and the ``IntList`` naming them, the value as an
``Int``; the call is ``[input, pad, value, out, out]``. A whole run's input holds the
small values every run holds (``convcheck.values``).
"""

from __future__ import annotations

import math
from typing import Any

from convcheck.executorch_wheel import flatbuffer, plan, runtime
from convcheck.executorch_wheel.memory import Limits
from convcheck.executorch_wheel.plan import Plan, legacy_out_sizes
from convcheck.executorch_wheel.runtime import WHOLE
from convcheck.ops.constant_pad_nd.executorch_target.logs import classify
from convcheck.values import logical_values

# What the worker asks of an op's target module (``convcheck.executorch_wheel.worker``).
__all__ = ["classify", "inputs", "make_plan", "program"]

OPERATOR = ("aten::constant_pad_nd", "out")


def make_plan(case: Any, limits: Limits) -> Plan:
    def work(out_sizes: tuple[int, ...]) -> int:
        """One copy or fill per out element, and the loops' visit of every index of
        every dim but the last (they recurse through the input's outer dims)."""
        visits = sum(math.prod(case.input.sizes[: d + 1]) for d in range(case.input.rank - 1))
        return math.prod(out_sizes) + visits

    return plan.make_plan((case.input,), (case.out,), legacy_out_sizes(case), work, limits)


def program(case: Any, planned: Plan, form: str) -> bytes:
    """The ``.pte`` bytes for ``case`` in ``form``."""
    values, planned_bytes = plan.tensors((case.input,), (case.out,), planned, form)
    args = (0, values.int_list(case.pad), values.add(("int", case.value)), 1, 1)
    inputs = (0,) if form == WHOLE else ()
    layout = flatbuffer.Layout(tuple(values), inputs, (1,), args, planned_bytes, OPERATOR)
    return flatbuffer.encode(layout)


def inputs(case: Any) -> list:
    """The input tensor of a whole run (in a worker: torch's)."""
    return [runtime.input_tensor(case.input, logical_values(case.input, "input"))]
