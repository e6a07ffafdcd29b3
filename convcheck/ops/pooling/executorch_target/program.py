"""A pooling case as the program that makes ExecuTorch 1.5.1 call its kernel with it, and
whether that program runs whole or is probed (``convcheck.executorch_wheel.memory``).

The values are laid out as ``to_executorch`` lays out the op's call with the input as the
program's one input: the input, out (and indices), then the arguments in order, each list
as its ``Int`` values followed by the ``IntList`` that names them. avg_pool2d's call is
``[input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override,
out, out]`` (a missing override is a ``Null``); max_pool2d_with_indices' is ``[input,
kernel_size, stride, padding, dilation, ceil_mode, out, indices, (out, indices)]``, its
result a ``TensorList``.

Three forms (``convcheck.executorch_wheel.runtime``):

* ``whole``: input, out and indices memory-planned in that order; out and indices are
  ``DYNAMIC_BOUND`` with the sizes the legacy kernel computes as their capacity.
* ``probe``: the input has no memory and is not an input (the checks read no data); out
  and indices have a capacity of 0. The kernel stops at its resize of out.
* ``probe-static``: as ``probe`` with a ``STATIC`` out of sizes 0, whose failed resize
  logs the sizes the kernel computed.

The sizes come from the model's legacy steps up to ``output_sizes`` (int64 wrapping, C
division, narrowing to int32): where the model is wrong about them, the run's resize
fails and says so, an infidelity the judge reports rather than hides.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from convcheck import model
from convcheck.case import TensorSpec
from convcheck.executorch_wheel import flatbuffer
from convcheck.executorch_wheel.flatbuffer import DYNAMIC_BOUND, TensorValue, Values
from convcheck.executorch_wheel.memory import ALIGNMENT, Limits, aligned, max_stride, sized_bytes
from convcheck.executorch_wheel.runtime import PROBE, WHOLE
from convcheck.fixedint import INT32_MAX, INT64_MAX, Wrapping
from convcheck.steps import Accept, Reject

OPERATORS = {
    "avg_pool2d": ("aten::avg_pool2d", "out"),
    "max_pool2d_with_indices": ("aten::max_pool2d_with_indices", "out"),
}


@dataclass(frozen=True)
class Plan:
    whole: bool
    out_sizes: tuple[int, ...] | None  # what the legacy kernel computes, if it gets there
    capacity: tuple[int, ...]  # out's (and indices') sizes in the program


def legacy_out_sizes(case: Any) -> tuple[int, ...] | None:
    """The sizes the legacy kernel's ``get_*_out_target_size`` computes, or None when a
    check rejects the call before it gets there."""
    revision = model.revision_of(case, "legacy")
    call = revision.call(case)
    arith = Wrapping()
    for step in revision.steps:
        try:
            step(call, arith)
        except (Reject, Accept):
            return None
        if step.__name__ == "output_sizes":
            return tuple(call.out_sizes)
    return None


def outputs(case: Any) -> tuple[TensorSpec, ...]:
    """The tensors the kernel writes: out, and max pooling's indices."""
    indices = getattr(case, "indices", None)
    return (case.out,) if indices is None else (case.out, indices)


def work(case: Any, out_sizes: tuple[int, ...]) -> int:
    """The loops' iterations: every tap of every window, inside the input or not, plus one
    per out element."""
    kernel = case.kernel_size
    taps = kernel[0] * kernel[-1]
    return math.prod(out_sizes) * (taps + 1)


def make_plan(case: Any, limits: Limits) -> Plan:
    sizes = legacy_out_sizes(case)
    out = case.out
    # Sizes the kernel's resize of out accepts: it gets there with these, or rejects first.
    resized = (
        sizes
        if sizes is not None
        and len(sizes) == out.rank
        and all(s >= 0 for s in sizes)
        and math.prod(sizes) <= INT64_MAX
        else None
    )
    capacity = resized if resized is not None else (0,) * out.rank
    written = outputs(case)
    arena = aligned(sized_bytes(case.input.sizes, case.input.dtype))
    arena += sum(aligned(sized_bytes(capacity, t.dtype)) for t in written)
    # The pybindings hold a tensor's strides in 32 bits, and abort on an output whose
    # strides do not fit: an empty tensor can have such strides.
    shapes = [(case.input.sizes, case.input.order)]
    shapes += [(capacity, t.order) for t in written]
    whole = (
        arena <= limits.max_arena_bytes
        and all(max_stride(s, o) <= INT32_MAX for s, o in shapes)
        and (resized is None or work(case, resized) <= limits.max_work)
    )
    return Plan(whole, sizes, capacity)


def program(case: Any, plan: Plan, form: str) -> bytes:
    """The ``.pte`` bytes for ``case`` in ``form``."""
    written = outputs(case)
    spec = case.input
    if form == WHOLE:
        values = Values([TensorValue(spec.dtype, spec.sizes, spec.order, flatbuffer.STATIC, 0)])
        at = aligned(sized_bytes(spec.sizes, spec.dtype))
        for t in written:
            values.append(TensorValue(t.dtype, plan.capacity, t.order, DYNAMIC_BOUND, at))
            at += aligned(sized_bytes(plan.capacity, t.dtype))
        planned = max(at, ALIGNMENT)
    else:
        dynamism = DYNAMIC_BOUND if form == PROBE else flatbuffer.STATIC
        values = Values([TensorValue(spec.dtype, spec.sizes, spec.order)])
        for t in written:
            values.append(TensorValue(t.dtype, (0,) * t.rank, t.order, dynamism, 0))
        planned = ALIGNMENT
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
    layout = flatbuffer.Layout(tuple(values), inputs, out_indices, tuple(args), planned, operator)
    return flatbuffer.encode(layout)
