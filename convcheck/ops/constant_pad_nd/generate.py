"""Calls of ``constant_pad_nd.out`` by construction: a pad list of pairs that reaches
some of the input's dims, small pads (a few negative: torch crops with them), then a pad,
a size or the value pushed to an edge."""

from __future__ import annotations

from convcheck.case import TensorSpec
from convcheck.generate import LAYOUTS, Source, dim_order, dtype, edge_int64, size, small_or_edge
from convcheck.ops.constant_pad_nd.case import ConstantPadNdCase
from convcheck.ops.constant_pad_nd.checks import FLOAT16_MAX

# Values at the edges of the dtypes the kernel converts the value to.
EDGE_VALUES = (127, 128, -128, -129, 255, 256, -255, -256, FLOAT16_MAX, FLOAT16_MAX + 1)


def build_case(src: Source, small: bool = False) -> ConstantPadNdCase:
    """``small`` keeps every tensor within a few thousand elements."""
    p_edge = 0.0 if small else 0.1
    rank = src.choice((1, 2, 3, 4)) if src.chance(0.9) else src.choice((0, 5, 6))
    sizes = tuple(size(src, 0 if src.chance(0.05) else 1, 4, p_edge / 2) for _ in range(rank))
    pairs = src.integer(0, rank)
    length = 2 * pairs if src.chance(0.95) else src.integer(0, 2 * rank + 3)
    low = -2 if src.chance(0.2) else 0
    pad = tuple(small_or_edge(src, low, 3, p_edge) for _ in range(length))
    roll = src.integer(0, 9)
    value = 0 if roll < 5 else src.integer(-3, 3) if roll < 7 else src.choice(EDGE_VALUES)
    if roll == 9:
        value = edge_int64(src)
    layout = src.choice(LAYOUTS)
    in_dtype = dtype(src)
    out_dtype = in_dtype if src.chance(0.95) else dtype(src)
    out_rank = rank if src.chance(0.97) else src.integer(0, 5)
    return ConstantPadNdCase(
        input=TensorSpec(sizes, in_dtype, dim_order(src, rank, layout)),
        pad=pad,
        value=value,
        out=TensorSpec((1,) * out_rank, out_dtype, dim_order(src, out_rank, layout)),
    )


def valid_cases() -> tuple[ConstantPadNdCase, ...]:
    """Valid calls both revisions handle alike and correctly: one dim padded, two, a
    wide value in a wide dtype, nothing padded."""
    t = TensorSpec
    return (
        ConstantPadNdCase(t((1, 2)), (1, 2), 0, t((1, 1))),
        ConstantPadNdCase(t((2, 3, 4)), (1, 0, 0, 2), 7, t((1, 1, 1))),
        ConstantPadNdCase(t((3,), "int16"), (2, 2), -300, t((1,), "int16")),
        ConstantPadNdCase(t((2, 2)), (), 0, t((1, 1))),
    )
