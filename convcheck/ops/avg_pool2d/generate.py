"""Calls of ``avg_pool2d.out`` (``convcheck.ops.pooling.generate`` builds the window)."""

from __future__ import annotations

from convcheck.generate import Source
from convcheck.ops.avg_pool2d.case import AvgPool2dCase
from convcheck.ops.pooling.generate import divisor, pool_arguments


def build_case(src: Source, small: bool = False) -> AvgPool2dCase:
    return AvgPool2dCase(
        **pool_arguments(src, small, dilated=False),
        count_include_pad=src.chance(0.6),
        divisor_override=divisor(src, small),
    )
