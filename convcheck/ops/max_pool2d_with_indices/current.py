"""``current``: ``max_pool2d_with_indices.out`` fixed (docs/checks-pooling.md).

What ATen accepts (``max_pool2d_checks_and_compute_shape``, ``pooling_output_shape``,
``pool2d_shape_check``), in an order where every bound comes before the arithmetic it
protects: the lengths and int32 ranges of kernel size, stride, padding and dilation
first, the sizes in int64 after, and those the 32-bit size type cannot hold refused.
The loops visit only the taps inside the input.
"""

from __future__ import annotations

from convcheck.ops.convolution.current import output_fits
from convcheck.ops.max_pool2d_with_indices import legacy
from convcheck.ops.max_pool2d_with_indices.legacy import dtype_switch
from convcheck.ops.pooling.checks import (
    dim_orders,
    dtypes,
    indices_dtype,
    input_shape,
    input_strides,
    output_size_valid,
)
from convcheck.ops.pooling.current import (
    dilation,
    indices_strides,
    input_strides_fit,
    lengths_and_ranges,
    out_strides,
    output_sizes,
    padding_half_kernel,
)

# Its own steps are legacy's; the shared steps' ids are ``convcheck.ops.pooling``'s.
CHECKS = legacy.CHECKS

STEPS = (
    dtypes,
    indices_dtype,
    dim_orders,
    lengths_and_ranges,
    dilation,
    input_shape,
    padding_half_kernel,
    output_sizes,
    output_size_valid,
    output_fits,
    out_strides,
    indices_strides,
    dtype_switch,
    input_strides_fit,
    input_strides,
)
LOOP_STEPS = legacy.LOOP_STEPS
