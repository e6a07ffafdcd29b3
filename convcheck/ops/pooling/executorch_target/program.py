"""A pooling case as the program that makes ExecuTorch 1.5.1 call its kernel with it, and
whether that program runs whole or is probed (``convcheck.executorch_wheel.plan``).

The values are laid out as ``to_executorch`` lays out the op's call with the input as the
program's one input: the input, out (and indices), then the arguments in order, each list
as its ``Int`` values followed by the ``IntList`` that names them. avg_pool2d's call is
``[input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override,
out, out]`` (a missing override is a ``Null``); max_pool2d_with_indices' is ``[input,
kernel_size, stride, padding, dilation, ceil_mode, out, indices, (out, indices)]``, its
result a ``TensorList``.

A whole run's input holds the small values every run holds (``convcheck.values``), or
avg_pool2d's ``int64_fill`` in every element (as our kernel's call unit writes it).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from convcheck.case import TensorSpec
from convcheck.executorch_wheel import flatbuffer, plan, runtime
from convcheck.executorch_wheel.memory import Limits
from convcheck.executorch_wheel.plan import Plan, legacy_out_sizes
from convcheck.executorch_wheel.runtime import WHOLE
from convcheck.ops.pooling.executorch_target.logs import classify
from convcheck.values import logical_values

# What the worker asks of an op's target module (``convcheck.executorch_wheel.worker``).
__all__ = ["classify", "inputs", "make_plan", "program"]

OPERATORS = {
    "avg_pool2d": ("aten::avg_pool2d", "out"),
    "max_pool2d_with_indices": ("aten::max_pool2d_with_indices", "out"),
}


def outputs(case: Any) -> tuple[TensorSpec, ...]:
    """The tensors the kernel writes: out, and max pooling's indices."""
    indices = getattr(case, "indices", None)
    return (case.out,) if indices is None else (case.out, indices)


def make_plan(case: Any, limits: Limits) -> Plan:
    def work(out_sizes: tuple[int, ...]) -> int:
        """Every tap of every window, inside the input or not, and one per out element."""
        kernel = case.kernel_size
        return math.prod(out_sizes) * (kernel[0] * kernel[-1] + 1)

    return plan.make_plan((case.input,), outputs(case), legacy_out_sizes(case), work, limits)


def program(case: Any, planned: Plan, form: str) -> bytes:
    """The ``.pte`` bytes for ``case`` in ``form``."""
    written = outputs(case)
    values, planned_bytes = plan.tensors((case.input,), written, planned, form)
    out_indices = tuple(range(1, len(values)))
    args = [
        0,
        values.int_list(case.kernel_size),
        values.int_list(case.stride),
        values.int_list(case.padding),
    ]
    if len(written) == 1:  # avg_pool2d
        override = case.divisor_override
        args.append(values.add(("bool", case.ceil_mode)))
        args.append(values.add(("bool", case.count_include_pad)))
        args.append(values.add(None if override is None else ("int", override)))
        args += [1, 1]
    else:
        args.append(values.int_list(case.dilation))
        args.append(values.add(("bool", case.ceil_mode)))
        args += [*out_indices, values.add(("tensor_list", out_indices))]
    inputs = (0,) if form == WHOLE else ()
    operator = OPERATORS[type(case).OP]
    layout = flatbuffer.Layout(
        tuple(values), inputs, out_indices, tuple(args), planned_bytes, operator
    )
    return flatbuffer.encode(layout)


def inputs(case: Any) -> list:
    """The input tensor of a whole run (in a worker: torch's)."""
    spec = case.input
    fill = getattr(case, "int64_fill", None)
    if fill is not None and spec.dtype == "int64":
        return [runtime.input_tensor(spec, np.full(spec.sizes, fill, dtype=np.int64))]
    return [runtime.input_tensor(spec, logical_values(spec, "input"))]
