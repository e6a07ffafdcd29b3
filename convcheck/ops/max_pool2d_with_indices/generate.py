"""Calls of ``max_pool2d_with_indices.out`` (``convcheck.ops.pooling.generate`` builds
the window)."""

from __future__ import annotations

from convcheck.case import TensorSpec
from convcheck.generate import Source, dtype
from convcheck.ops.max_pool2d_with_indices.case import MaxPool2dWithIndicesCase
from convcheck.ops.pooling.generate import pool_arguments


def build_case(src: Source, small: bool = False) -> MaxPool2dWithIndicesCase:
    arguments = pool_arguments(src, small, dilated=True)
    out = arguments["out"]
    return MaxPool2dWithIndicesCase(
        **arguments,
        indices=TensorSpec(out.sizes, "int64" if src.chance(0.95) else dtype(src), out.dim_order),
    )
