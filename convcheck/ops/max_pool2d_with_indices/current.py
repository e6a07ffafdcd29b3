"""``current``: ``max_pool2d_with_indices.out`` fixed (docs/checks-pooling.md).

What ATen accepts (``max_pool2d_checks_and_compute_shape``, ``pooling_output_shape``,
``pool2d_shape_check``), in an order where every bound comes before the arithmetic it
protects: the lengths and int32 ranges of kernel size, stride, padding and dilation
first, the sizes in int64 after, and those the 32-bit size type cannot hold refused.
The loops visit only the taps inside the input.
"""

from __future__ import annotations

from convcheck.ops.max_pool2d_with_indices import legacy
from convcheck.ops.pooling import checks, current

# Legacy's steps and the shared ones, in the fixed order (their ids are theirs).
STEPS = (
    checks.dtypes,
    checks.indices_dtype,
    checks.dim_orders,
    current.lengths_and_ranges,
    current.dilation,
    *current.OUTPUT_SIZE_STEPS,
    current.indices_strides,
    legacy.dtype_switch,
    current.input_strides_fit,
    checks.input_strides,
)
