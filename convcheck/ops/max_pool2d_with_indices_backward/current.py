"""``current``: the fixed semantics. Stride (empty, one or two values) and dilation are
checked as torch checks them, and bounded to 32 bits with the kernel size, so the output
size cannot overflow; indices must have grad_output's sizes and layout, and every index
value must be -1 or a position in its own plane (``docs/ops/max_pool2d_with_indices_backward.md``
says why a kernel should promise that, though torch does not check it)."""

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
    padding_half_kernel,
)


def params(call: Call, a: Arith) -> None:
    case = call.case
    check_list("kernel_size", case.kernel_size, 1, INT32_MAX, empty=False)
    check_list("stride", case.stride, 1, INT32_MAX, empty=True)
    check_list("padding", case.padding, 0, None, empty=False)
    padding_half_kernel(call)
    check_list("dilation", case.dilation, 1, INT32_MAX, empty=False)


def kernel_fits(call: Call, a: Arith) -> None:
    """The dilated kernel no larger than the padded input (torch's "output size is too
    small"): the output size's numerator is then never negative, where legacy's
    truncating division made a size of 1 of a numerator between -stride and 0."""
    case, sizes = call.case, call.input.sizes
    for i in range(2):
        site = f"kernel_fits.dim{i}"
        k, p = val_at(case.kernel_size, i), val_at(case.padding, i, 0)
        span = a.mul_i64(val_at(case.dilation, i, 1), a.sub_i64(k, 1, f"{site}.k_minus_1"), site)
        padded = a.add_i64(sizes[len(sizes) - 2 + i], a.mul_i64(2, p, f"{site}.two_pad"), site)
        if padded < a.add_i64(span, 1, f"{site}.span"):
            raise Reject("output.invalid")


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
    "kernel_fits": ("output.invalid",),
    "indices_shape": ("indices.sizes", "dim_order.indices"),
    "out_strides": ("output.stride_too_large",),
    "index_values": ("indices.range",),
}

_AS_LEGACY = {step.__name__: step for step in legacy.STEPS}
STEPS = (
    *(_AS_LEGACY[name] for name in ("dtypes", "dim_orders", "input_shape")),
    params,
    kernel_fits,
    *(_AS_LEGACY[name] for name in ("pool_sizes", "pool_size_valid", "grad_output_shape")),
    indices_shape,
    _AS_LEGACY["resize_grad_input"],
    out_strides,
    _AS_LEGACY["dtype_switch"],
    index_values,
    _AS_LEGACY["loops"],
)
LOOP_STEPS = frozenset({"index_values", "loops"})
