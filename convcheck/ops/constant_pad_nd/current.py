"""``current``: the fixed semantics, what ATen's ``constant_pad_nd`` accepts, with no
arithmetic that can leave its type.

A negative pad crops, as in torch (``narrow``), as long as the dim keeps a non-negative
size; every pad is bounded to 32 bits first, so each size is computed exactly in int64
and checked against the int32 size type before it is stored. The value is checked
against the dtype only where something is padded (torch fills only then). An empty out
returns before the loops, whose guards then never fire: out has the size they walk.
"""

from __future__ import annotations

from convcheck.fixedint import INT32_MAX, INT32_MIN, Arith
from convcheck.ops.constant_pad_nd import checks, legacy
from convcheck.ops.constant_pad_nd.checks import Call, value_overflows
from convcheck.ops.convolution.checks import empty_out
from convcheck.ops.convolution.current import out_strides
from convcheck.steps import Reject


def pad_range(call: Call, a: Arith) -> None:
    """32 bits each way: a size plus two pads then stays far inside int64."""
    if any(p < INT32_MIN or p > INT32_MAX for p in call.pad):
        raise Reject("pad.range")


def output_sizes(call: Call, a: Arith) -> None:
    """Torch narrows by a negative pad before it adds the positive ones: a dim whose
    negative pads take more than its size is refused, whatever the other pad adds."""
    sizes = []
    for d, size in enumerate(call.input.sizes):
        pads = call.pads(d)
        if pads is not None:
            site = f"output_sizes.dim{d}"
            before, after = pads
            cropped = a.add_i64(size, min(before, 0), f"{site}.crop_before")
            cropped = a.add_i64(cropped, min(after, 0), f"{site}.crop_after")
            if cropped < 0:
                raise Reject("output.negative")
            size = a.add_i64(
                a.add_i64(size, before, f"{site}.plus_before"), after, f"{site}.plus_after"
            )
        sizes.append(size)
    call.out_sizes = sizes


def output_fits(call: Call, a: Arith) -> None:
    if any(s > INT32_MAX for s in call.out_sizes):
        raise Reject("output.too_large")


def value(call: Call, a: Arith) -> None:
    """Only a call that pads fills out with the value."""
    if any(p > 0 for p in call.pad) and value_overflows(call.case.value, call.input.dtype):
        raise Reject("value.overflow")


# The steps legacy shares check what legacy's do.
_AS_LEGACY = legacy.CHECKS
CHECKS = {
    **{step: _AS_LEGACY[step] for step in ("dtypes", "ranks", "pad_length", "pad_range")},
    **{step: _AS_LEGACY[step] for step in ("same_dim_order", "resize_out", "value")},
    "output_sizes": ("output.negative",),
    "output_fits": ("output.too_large",),
    "out_strides": ("output.stride_too_large",),
}

STEPS = (
    checks.dtypes,
    checks.ranks,
    checks.pad_length,
    pad_range,
    legacy.same_dim_order,
    output_sizes,
    output_fits,
    checks.resize_out,
    out_strides,
    value,
    empty_out,
)
LOOP_STEPS: frozenset[str] = frozenset()
