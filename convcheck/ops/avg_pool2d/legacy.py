"""``legacy``: ExecuTorch's portable ``avg_pool2d.out`` at main cff6f4dd32 (August 2026).

Read beside ``kernels/portable/cpu/util/kernel_ops_util.cpp`` (``check_avg_pool2d_args``,
``get_avg_pool2d_out_target_size``, ``_kernel_output_size_helper``), ``kernel_ops_util.h``
(the loops) and ``kernels/portable/cpu/op_avg_pool2d.cpp``. Bugs included: the stride is
never checked (its check validates the kernel size a second time), so a stride of 0
divides by zero and any other value reaches the int64 arithmetic; the padded window's
area can overflow; the loops visit every tap of a kernel however far it reaches past
the input (``idle_taps``); an int64 window's sum can overflow, and INT64_MIN divided
by an override of -1 does (``window_sums``).
"""

from __future__ import annotations

from convcheck.fixedint import Arith
from convcheck.ops.convolution.checks import is_contiguous
from convcheck.ops.convolution.legacy import same_dim_order as one_layout
from convcheck.ops.pooling.checks import (
    Call,
    dim_orders,
    dtypes,
    input_shape,
    input_strides,
    output_size_valid,
    resize_out,
)
from convcheck.ops.pooling.legacy import (
    first_pool_size,
    idle_taps,
    kernel_size,
    last_pool_size,
    output_sizes,
    padding,
    stride,
    window_sums,
)
from convcheck.steps import Reject


def divisor_override(call: Call, a: Arith) -> None:
    if call.case.divisor_override == 0:  # type: ignore[attr-defined]
        raise Reject("divisor_override.zero")


def same_dim_order(call: Call, a: Arith) -> None:
    """``avg_pool2d_out`` wants input and out both contiguous or both channels-last
    (``tensors_have_same_dim_order``: of any ranks), then the input in the default order:
    a channels-last input is refused although the loops index by strides."""
    one_layout(call, a)  # type: ignore[arg-type]
    if not is_contiguous(call.input):
        raise Reject("dim_order.input_channels_last")


# Floating dtypes and int64 (``ET_SWITCH_FLOATHBF16_TYPES_AND(Long, ...)``).
SUPPORTED_DTYPES = frozenset({"float32", "float64", "float16", "bfloat16", "int64"})


def dtype_switch(call: Call, a: Arith) -> None:
    if call.input.dtype not in SUPPORTED_DTYPES:
        raise Reject("dtype.unsupported")


# The check ids of its own steps, in the order each checks them (docs/checks-pooling.md;
# the shared steps' are ``convcheck.ops.pooling``'s).
CHECKS = {
    "divisor_override": ("divisor_override.zero",),
    "same_dim_order": ("dim_order.in_out", "dim_order.input_channels_last"),
    "dtype_switch": ("dtype.unsupported",),
}

STEPS = (
    dtypes,
    dim_orders,
    input_shape,
    kernel_size,
    stride,
    padding,
    divisor_override,
    same_dim_order,
    output_sizes,
    output_size_valid,
    resize_out,
    dtype_switch,
    input_strides,
    first_pool_size,
    idle_taps,
    window_sums,
    last_pool_size,
)
LOOP_STEPS = frozenset(
    {"input_strides", "first_pool_size", "idle_taps", "window_sums", "last_pool_size"}
)
