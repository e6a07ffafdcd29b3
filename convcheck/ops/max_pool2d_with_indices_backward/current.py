"""``current``: the fixed semantics. Stride (empty, one or two values) and dilation are
checked as torch checks them, and bounded to 32 bits with the kernel size, so the output
size cannot overflow; it is computed in signed int64, as torch computes it; a padding is
held to the kernel in both dims; indices must have grad_output's sizes and layout, and
every index value must be -1 or a position in its own plane
(``docs/ops/max_pool2d_with_indices_backward.md`` says why a kernel should promise that,
though torch does not check it)."""

from __future__ import annotations

from convcheck.fixedint import INT32_MAX, Arith
from convcheck.model.steps import Reject
from convcheck.ops.convolution.checks import val_at
from convcheck.ops.convolution.current import out_strides
from convcheck.ops.max_pool2d_with_indices_backward import legacy
from convcheck.ops.max_pool2d_with_indices_backward.checks import (
    Call,
    check_list,
    index_values,
    indices_shape,
)


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
    """The output size in signed int64, exact by the bounds above, a negative numerator
    refused (torch floors it to a size below 1; legacy's truncation made it 1)."""
    case, sizes = call.case, call.input.sizes
    out = list(sizes[:-2])
    for i in range(2):
        site = f"pool_sizes.dim{i}"
        n = sizes[len(sizes) - 2 + i]
        k = val_at(case.kernel_size, i)
        s, d, p = val_at(case.stride, i, k), val_at(case.dilation, i, 1), val_at(case.padding, i, 0)
        dilated = a.mul_i64(d, a.sub_i64(k, 1, f"{site}.k_minus_1"), f"{site}.dilated")
        t = a.add_i64(n, a.mul_i64(2, p, f"{site}.two_pad"), f"{site}.plus_two_pad")
        t = a.sub_i64(a.sub_i64(t, dilated, f"{site}.minus_dilated"), 1, f"{site}.minus_1")
        if case.ceil_mode:
            t = a.add_i64(t, a.sub_i64(s, 1, f"{site}.stride_minus_1"), f"{site}.plus_extra")
        if t < 0:
            raise Reject("output.invalid")
        size = a.add_i64(a.div_i64(t, s, f"{site}.div_stride"), 1, f"{site}.plus_1")
        if case.ceil_mode:
            start = a.mul_i64(a.sub_i64(size, 1, f"{site}.last"), s, f"{site}.last_start")
            if start >= a.add_i64(n, p, f"{site}.input_plus_pad"):
                size = a.sub_i64(size, 1, f"{site}.drop_last")
        out.append(size)
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
    "pool_sizes": ("output.invalid",),
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
