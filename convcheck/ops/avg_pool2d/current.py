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
from convcheck.ops.pooling import checks, current
from convcheck.ops.pooling.legacy import pool_size

# Legacy's steps and the shared ones, in the fixed order (their ids are theirs).
STEPS = (
    checks.dtypes,
    checks.dim_orders,
    current.lengths_and_ranges,
    legacy.divisor_override,
    *current.OUTPUT_SIZE_STEPS,
    legacy.dtype_switch,
    current.input_strides_fit,
    checks.input_strides,
    pool_size,
)
# The steps that run in the loops, beyond the shared ones legacy declares.
LOOP_STEPS = frozenset({"pool_size"})
