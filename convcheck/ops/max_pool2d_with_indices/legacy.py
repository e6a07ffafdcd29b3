"""``legacy``: ExecuTorch's portable ``max_pool2d_with_indices.out`` at main cff6f4dd32
(August 2026).

Read beside ``kernels/portable/cpu/util/kernel_ops_util.cpp``
(``check_max_pool2d_with_indices_args``, ``get_max_pool2d_with_indices_out_target_size``,
``_kernel_output_size_helper``), ``kernel_ops_util.h`` (the loops) and
``kernels/portable/cpu/op_max_pool2d_with_indices.cpp``. Bugs included: neither the
stride nor the dilation is checked (both checks validate the kernel size again), so a
stride of 0 divides by zero, a huge dilation overflows ``dilation * (kernel - 1)``, a
dilation of 0 or below is computed with, and the loops visit every tap of a kernel
however far it reaches past the input (``idle_taps``).
"""

from __future__ import annotations

from convcheck.fixedint import Arith
from convcheck.ops.pooling.checks import (
    Call,
    dim_orders,
    dtypes,
    indices_dtype,
    input_shape,
    input_strides,
    output_size_valid,
    resize_indices,
    resize_out,
)
from convcheck.ops.pooling.legacy import (
    dilation,
    idle_taps,
    kernel_size,
    output_sizes,
    padding,
    stride,
)
from convcheck.steps import Reject


def dtype_switch(call: Call, a: Arith) -> None:
    """Real dtypes, half and bfloat16 (``ET_SWITCH_REALHBF16_TYPES``): no bool."""
    if call.input.dtype == "bool":
        raise Reject("dtype.unsupported")


# The check ids of its own step (the shared steps' are ``convcheck.ops.pooling``'s).
CHECKS = {"dtype_switch": ("dtype.unsupported",)}

STEPS = (
    dtypes,
    indices_dtype,
    dim_orders,
    input_shape,
    kernel_size,
    stride,
    padding,
    dilation,
    output_sizes,
    output_size_valid,
    resize_out,
    resize_indices,
    dtype_switch,
    input_strides,
    idle_taps,
)
LOOP_STEPS = frozenset({"input_strides", "idle_taps"})
