"""``current``: the fixed semantics. Stride (empty, one or two values) and dilation are
checked as torch checks them, and bounded to 32 bits with the kernel size, so the output
size cannot overflow; it is computed in signed int64, as torch computes it; a padding is
held to the kernel in both dims; indices must have grad_output's sizes and layout, and
every index value must be -1 or a position in its own plane
(``docs/ops/max_pool2d_with_indices_backward.md`` says why a kernel should promise that,
though torch does not check it)."""

from __future__ import annotations

from convcheck.fixedint import INT32_MAX, Arith
from convcheck.ops.convolution.checks import val_at
from convcheck.ops.convolution.current import out_strides
from convcheck.ops.max_pool2d_with_indices_backward import legacy
from convcheck.ops.max_pool2d_with_indices_backward.checks import (
    Call,
    check_list,
    index_values,
    indices_shape,
)
from convcheck.ops.pooling.current import output_size
from convcheck.steps import Reject


def params(call: Call, a: Arith) -> None:
    case = call.case
    check_list("kernel_size", case.kernel_size, 1, INT32_MAX, empty=False)
    check_list("stride", case.stride, 1, INT32_MAX, empty=True)
    check_list("padding", case.padding, 0, None, empty=False)
    padding_both_dims(call)
    check_list("dilation", case.dilation, 1, INT32_MAX, empty=False)


def padding_both_dims(call: Call) -> None:
    """A padding of one value pads both dims, so it is held to both kernel dims (legacy
    holds it to the first only)."""
    case = call.case
    for i in range(2):
        if val_at(case.padding, i, 0) > val_at(case.kernel_size, i) // 2:
            raise Reject("padding.gt_half_kernel")


def pool_sizes(call: Call, a: Arith) -> None:
    """The forward's output size as ``current`` computes it (ATen's, in int64, exact by
    the bounds above); a size below 1 is refused next, as legacy refuses it (legacy's
    truncation made a negative numerator a size of 1; torch floors it)."""
    case, sizes = call.case, call.input.sizes
    out = list(sizes[:-2])
    for i in range(2):
        k = val_at(case.kernel_size, i)
        s, d, p = val_at(case.stride, i, k), val_at(case.dilation, i, 1), val_at(case.padding, i, 0)
        n = sizes[len(sizes) - 2 + i]
        out.append(output_size(a, f"pool_sizes.dim{i}", n, k, p, s, d, case.ceil_mode))
    call.pool_sizes = out


CHECKS = {
    **legacy.CHECKS,
    "params": (
        "kernel_size.length",
        "kernel_size.range",
        "stride.length",
        "stride.range",
        "padding.length",
        "padding.range",
        "padding.gt_half_kernel",
        "dilation.length",
        "dilation.range",
    ),
    "indices_shape": ("indices.sizes", "dim_order.indices"),
    "out_strides": ("output.stride_too_large",),
    "index_values": ("indices.range",),
}

_AS_LEGACY = {step.__name__: step for step in legacy.STEPS}
STEPS = (
    *(_AS_LEGACY[name] for name in ("dtypes", "dim_orders", "input_shape")),
    params,
    pool_sizes,
    *(_AS_LEGACY[name] for name in ("pool_size_valid", "grad_output_shape")),
    indices_shape,
    _AS_LEGACY["resize_grad_input"],
    out_strides,
    _AS_LEGACY["dtype_switch"],
    index_values,
    _AS_LEGACY["loops"],
)
LOOP_STEPS = frozenset({"index_values", "loops"})
