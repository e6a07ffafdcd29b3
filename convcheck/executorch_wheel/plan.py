"""Whether a case runs whole or is probed, and its tensors as a program's first values,
for an op whose kernel takes its input tensors and writes its outputs, each output
resized to the sizes its ``output_sizes`` step computes (the pooling ops, padding).

The sizes come from the model's legacy steps up to ``output_sizes`` (int64 wrapping, C
division, narrowing to int32): where the model is wrong about them, the run's resize
fails and says so, an infidelity the judge reports rather than hides.

A whole run plans the inputs, then the outputs, each ``DYNAMIC_BOUND`` with those sizes
as its capacity. A probe plans nothing: the inputs have no memory and are not the
program's inputs (the checks read no data), the outputs a capacity of 0
(``PROBE``), or static sizes of 0 (``PROBE_STATIC``), whose failed resize logs the sizes
the kernel computed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from convcheck import model
from convcheck.case import TensorSpec
from convcheck.executorch_wheel.flatbuffer import DYNAMIC_BOUND, STATIC, TensorValue, Values
from convcheck.executorch_wheel.memory import ALIGNMENT, Limits, aligned, max_stride, sized_bytes
from convcheck.executorch_wheel.runtime import PROBE, WHOLE
from convcheck.fixedint import INT32_MAX, INT64_MAX, Wrapping
from convcheck.steps import Accept, Reject


@dataclass(frozen=True)
class Plan:
    whole: bool
    out_sizes: tuple[int, ...] | None  # what the legacy kernel computes, if it gets there
    capacity: tuple[int, ...]  # every output's sizes in the program


def legacy_out_sizes(case: Any) -> tuple[int, ...] | None:
    """The sizes the legacy kernel computes for out, or None when a check rejects the
    call before it gets there."""
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


def make_plan(
    inputs: Sequence[TensorSpec],
    outputs: Sequence[TensorSpec],
    sizes: tuple[int, ...] | None,
    work: Callable[[tuple[int, ...]], int],
    limits: Limits,
) -> Plan:
    """The plan for a call of these tensors whose kernel sizes its outputs ``sizes``;
    ``work(sizes)`` counts its loops' iterations."""
    rank = outputs[0].rank
    # Sizes the kernel's resize of out accepts: it gets there with these, or rejects first.
    resized = (
        sizes
        if sizes is not None
        and len(sizes) == rank
        and all(s >= 0 for s in sizes)
        and math.prod(sizes) <= INT64_MAX
        else None
    )
    capacity = resized if resized is not None else (0,) * rank
    arena = sum(aligned(sized_bytes(t.sizes, t.dtype)) for t in inputs)
    arena += sum(aligned(sized_bytes(capacity, t.dtype)) for t in outputs)
    # The pybindings hold a tensor's strides in 32 bits, and abort on an output whose
    # strides do not fit: an empty tensor can have such strides.
    shapes = [(t.sizes, t.order) for t in inputs] + [(capacity, t.order) for t in outputs]
    whole = (
        arena <= limits.max_arena_bytes
        and all(max_stride(s, o) <= INT32_MAX for s, o in shapes)
        and (resized is None or work(resized) <= limits.max_work)
    )
    return Plan(whole, sizes, capacity)


def tensors(
    inputs: Sequence[TensorSpec], outputs: Sequence[TensorSpec], plan: Plan, form: str
) -> tuple[Values, int]:
    """The program's first values, the inputs then the outputs, and its planned bytes."""
    if form == WHOLE:
        values = Values()
        at = 0
        for t in inputs:
            values.append(TensorValue(t.dtype, t.sizes, t.order, STATIC, at))
            at += aligned(sized_bytes(t.sizes, t.dtype))
        for t in outputs:
            values.append(TensorValue(t.dtype, plan.capacity, t.order, DYNAMIC_BOUND, at))
            at += aligned(sized_bytes(plan.capacity, t.dtype))
        return values, max(at, ALIGNMENT)
    dynamism = DYNAMIC_BOUND if form == PROBE else STATIC
    values = Values(TensorValue(t.dtype, t.sizes, t.order) for t in inputs)
    values.extend(TensorValue(t.dtype, (0,) * t.rank, t.order, dynamism, 0) for t in outputs)
    return values, ALIGNMENT
