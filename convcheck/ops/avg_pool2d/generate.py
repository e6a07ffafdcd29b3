"""Calls of ``avg_pool2d.out`` (``convcheck.ops.pooling.generate`` builds the window)."""

from __future__ import annotations

from convcheck.fixedint import INT64_MAX, INT64_MIN
from convcheck.generate import Source
from convcheck.ops.avg_pool2d.case import AvgPool2dCase
from convcheck.ops.pooling.generate import divisor, pool_arguments

# What an int64 input is filled with, now and then: INT64_MIN alone divided by -1
# overflows, two of it summed do, and the others overflow in longer sums.
EXTREME_FILLS = (INT64_MIN, INT64_MAX, -1, INT64_MIN // 2, INT64_MAX // 3)


def build_case(src: Source, small: bool = False) -> AvgPool2dCase:
    arguments = pool_arguments(src, small, dilated=False)
    include_pad = src.chance(0.6)
    override = divisor(src, small)
    fill = None
    if arguments["input"].dtype == "int64" and src.chance(0.5):
        fill = src.choice(EXTREME_FILLS)
        override = -1 if src.chance(0.3) else override
    return AvgPool2dCase(
        **arguments,
        count_include_pad=include_pad,
        divisor_override=override,
        int64_fill=fill,
    )
