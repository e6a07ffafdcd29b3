"""``current``: ``avg_pool2d.out`` fixed (docs/checks-pooling.md).

What ATen accepts (``avg_pool2d``'s meta function, ``pooling_output_shape``,
``pool2d_shape_check``), in an order where every bound comes before the arithmetic it
protects: the lengths and int32 ranges of kernel size, stride and padding first, the
sizes in int64 after, and those the 32-bit size type cannot hold refused. Input and out
may have different dim orders, and channels-last input is computed (the loops index by
strides). The loops visit only the taps inside the input.
"""

from __future__ import annotations

from convcheck.ops.avg_pool2d import legacy
from convcheck.ops.avg_pool2d.legacy import divisor_override, dtype_switch
from convcheck.ops.convolution.current import output_fits
from convcheck.ops.pooling.checks import (
    dim_orders,
    dtypes,
    input_shape,
    input_strides,
    output_size_valid,
)
from convcheck.ops.pooling.current import (
    input_strides_fit,
    lengths_and_ranges,
    out_strides,
    output_sizes,
    padding_half_kernel,
)
from convcheck.ops.pooling.legacy import pool_size

# Its own steps are legacy's; the shared steps' ids are ``convcheck.ops.pooling``'s.
CHECKS = legacy.CHECKS

STEPS = (
    dtypes,
    dim_orders,
    lengths_and_ranges,
    divisor_override,
    input_shape,
    padding_half_kernel,
    output_sizes,
    output_size_valid,
    output_fits,
    out_strides,
    dtype_switch,
    input_strides_fit,
    input_strides,
    pool_size,
)
LOOP_STEPS = legacy.LOOP_STEPS
