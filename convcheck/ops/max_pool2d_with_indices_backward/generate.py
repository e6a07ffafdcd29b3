"""Calls of ``max_pool2d_with_indices_backward`` by construction: grad_output and indices
of the pooled sizes (computed exactly), index values that point into their plane, then a
parameter, a shape or an index value pushed to an edge."""

from __future__ import annotations

from convcheck.case import TensorSpec
from convcheck.fixedint import Exact
from convcheck.generate import LAYOUTS, Source, dim_order, dtype, edge_int64, param_list, size
from convcheck.ops.convolution.checks import val_at
from convcheck.ops.max_pool2d_with_indices_backward.case import MaxPoolBackwardCase
from convcheck.ops.pooling.legacy import output_size

# Index values that break a kernel that trusts them (the 1000 and -5 among them).
EDGE_INDICES = (-1, -2, -5, 1000)


def build_case(src: Source, small: bool = False) -> MaxPoolBackwardCase:
    p_edge = 0.0 if small else 0.08
    rank = 4 if src.chance(0.6) else 3 if src.chance(0.9) else src.choice((2, 5))
    spatial = [size(src, 1, 6, p_edge / 2) for _ in range(2)]
    lead = [size(src, 0 if src.chance(0.1) else 1, 2, 0.0), src.integer(1, 3)][4 - rank :]
    sizes = (lead + spatial)[: max(rank, 0)] if rank in (3, 4) else [1] * rank
    kernel = param_list(src, 2, 1, 3, p_edge)
    stride = () if src.chance(0.2) else param_list(src, 2, 1, 3, p_edge)
    padding = tuple(
        src.integer(0, max(val_at(kernel, i), 0) // 2) if src.chance(0.95) else edge_int64(src)
        for i in range(1 if src.chance(0.5) else 2)
    )
    dilation = param_list(src, 2, 1, 2, p_edge)
    ceil_mode = src.chance(0.3)
    pooled = list(sizes)
    if rank in (3, 4) and len(kernel) in (1, 2) and min(kernel) >= 1:
        for i in range(2):
            k = val_at(kernel, i)
            n = pooled[rank - 2 + i]
            s = val_at(stride, i, k)
            d, p = val_at(dilation, i, 1), val_at(padding, i, 0)
            if s != 0:
                pooled[rank - 2 + i] = max(output_size(Exact(), "gen", n, k, p, s, d, ceil_mode), 0)
    pooled = [min(s, 2**31 - 1) for s in pooled]
    indices = list(pooled)
    if indices and src.chance(0.08):
        d = src.integer(0, len(indices) - 1)
        indices[d] = src.integer(0, max(indices[d] - 1, 0))
    plane = sizes[-1] * sizes[-2] if len(sizes) >= 2 else 1
    fill = src.integer(0, max(plane - 1, 0)) if src.chance(0.85) else src.choice(EDGE_INDICES)
    if src.chance(0.03):
        fill = edge_int64(src)
    planted_at = None
    planted_value = 0
    if src.chance(0.25):
        numel = 1
        for s in indices:
            numel *= s
        planted_at = src.integer(0, max(numel - 1, 0)) if src.chance(0.9) else edge_int64(src)
        planted_value = src.choice((*EDGE_INDICES, plane, plane - 1, src.integer(0, 3)))
    layout = src.choice(LAYOUTS)
    base = dtype(src) if src.chance(0.2) else "float32"
    dtypes = [base if src.chance(0.95) else dtype(src) for _ in range(2)]
    return MaxPoolBackwardCase(
        grad_output=TensorSpec(tuple(pooled), dtypes[0], dim_order(src, rank, layout)),
        input=TensorSpec(tuple(sizes), base, dim_order(src, rank, layout)),
        kernel_size=kernel,
        stride=stride,
        padding=padding,
        dilation=dilation,
        ceil_mode=ceil_mode,
        indices=TensorSpec(tuple(indices), "int64" if src.chance(0.97) else dtype(src)),
        grad_input=TensorSpec((1,) * rank, dtypes[1]),
        indices_fill=fill,
        planted_at=planted_at,
        planted_value=planted_value,
    )
