"""``legacy``: ExecuTorch's portable ``max_pool2d_with_indices_backward.grad_input`` at
cff6f4dd32, bugs included: stride and dilation unchecked (the checks meant for them
validate ``kernel_size`` again, kernel_ops_util.cpp:553 and :556), so the output size
divides by a stride of 0 and multiplies an unbounded dilation (:213, :211); indices'
sizes and values unchecked, so the loops over-read indices and write outside grad_input
(op_max_pool2d_with_indices_backward.cpp:125, :128)."""

from __future__ import annotations

from convcheck.fixedint import Arith
from convcheck.ops.convolution.checks import out_strides
from convcheck.ops.max_pool2d_with_indices_backward.checks import (
    Call,
    check_list,
    dim_orders,
    dtype_switch,
    dtypes,
    grad_output_shape,
    loops,
    padding_half_kernel,
    pool_size_valid,
    pool_sizes,
    resize_grad_input,
)
from convcheck.ops.pooling.checks import input_shape


def params(call: Call, a: Arith) -> None:
    """``kernel_size`` three times over (as itself, as "stride", as "dilation"), and
    padding: the real stride and dilation are never looked at."""
    kernel = call.case.kernel_size
    check_list("kernel_size", kernel, 1, None, empty=False)
    check_list("stride", kernel, 1, None, empty=True)
    check_list("padding", call.case.padding, 0, None, empty=False)
    padding_half_kernel(call)
    check_list("dilation", kernel, 1, None, empty=False)


CHECKS = {
    "dtypes": ("dtype.mismatch", "indices.dtype"),
    "dim_orders": ("dim_order.input", "dim_order.grad_output"),
    "input_shape": ("input.shape",),
    "params": (
        "kernel_size.length",
        "kernel_size.range",
        "padding.length",
        "padding.range",
        "padding.gt_half_kernel",
    ),
    "pool_size_valid": ("output.invalid",),
    "grad_output_shape": ("grad_output.rank", "grad_output.sizes"),
    "resize_grad_input": ("grad_input.resize",),
    "dtype_switch": ("dtype.unsupported",),
}

STEPS = (
    dtypes,
    dim_orders,
    input_shape,
    params,
    pool_sizes,
    pool_size_valid,
    grad_output_shape,
    resize_grad_input,
    out_strides,
    dtype_switch,
    loops,
)
LOOP_STEPS = frozenset({"loops"})
