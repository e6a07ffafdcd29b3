"""Calls of the pooling kernels by construction: a window that fits the input, padding
within half the kernel, then an argument or two pushed to an edge (``convcheck.generate``'s
draws), and now and then the families the bugs need all at once: a kernel far larger than
the input with the padding that makes it fit (the loops' work, the padded window's
area), a stride of 0 or INT64_MIN beside a dim the output-size check refuses."""

from __future__ import annotations

from typing import Any

from convcheck.case import TensorSpec
from convcheck.generate import Source, dim_order, dtype, edge_int64, param_list, size

# Kernel sizes past any input: with half of one as padding, a window that fits.
HUGE_KERNELS = (2**16, 2**20, 2**31 - 1, 2**31, 2**32, 2**33, 2**40, 2**62)


def pool_arguments(src: Source, small: bool, dilated: bool) -> dict[str, Any]:
    """The arguments both kernels take: the input, out, the window's lists and
    ``ceil_mode`` (``dilated``: with a dilation list)."""
    p_edge = 0.0 if small else 0.08
    rank = src.choice((3, 4)) if src.chance(0.95) else src.choice((2, 5))
    spatial = [size(src, 0 if src.chance(0.03) else 1, 6, p_edge) for _ in range(2)]
    leading = [size(src, 0 if src.chance(0.05) else 1, 3, p_edge / 2) for _ in range(2)]
    sizes = (leading + spatial)[-rank:] if rank <= 4 else [1] * (rank - 4) + leading + spatial
    kernel = [src.integer(1, max(2, min(s, 4))) for s in spatial]
    if src.chance(0.1):
        # Larger than the input: legacy's truncating division may still accept it.
        kernel[src.integer(0, 1)] += src.integer(1, 4)
    family = src.integer(0, 19)
    if family == 0 and not small:
        huge = src.choice(HUGE_KERNELS)
        kernel = [huge, huge if src.chance(0.8) else src.choice(HUGE_KERNELS)]
        padding: tuple[int, ...] = tuple(k // 2 for k in kernel)
        stride: tuple[int, ...] = () if src.chance(0.5) else tuple(kernel)
    else:
        padding = tuple(src.integer(0, k // 2) for k in kernel)
        stride = param_list(src, 2, 1, 3, p_edge)
        if src.chance(0.1):
            stride = ()
        if family == 1:
            # A stride legacy never checks, beside a dim the output check may refuse.
            stride = (src.choice((0, -1, -2, -(2**63), -(2**62))), src.integer(1, 2))
            if src.chance(0.5):
                stride = stride[::-1]
    kernel_list = tuple(kernel)
    if src.chance(0.15):
        kernel_list = param_list(src, 2, 1, 4, p_edge)
    if src.chance(0.3):
        padding = padding[:1] if len(set(padding)) == 1 else padding
    if src.chance(p_edge * 2):
        padding = param_list(src, 2, 0, 2, p_edge)
    layout = "channels_last" if rank == 4 and src.chance(0.2) else "contiguous"
    base = dtype(src)
    out_rank = rank if src.chance(0.97) else src.choice((3, 4))
    arguments: dict[str, Any] = {
        "input": TensorSpec(tuple(sizes), base, dim_order(src, rank, layout)),
        "out": TensorSpec(
            (1,) * out_rank,
            base if src.chance(0.95) else dtype(src),
            dim_order(src, out_rank, layout if src.chance(0.9) else "mixed"),
        ),
        "kernel_size": kernel_list,
        "stride": stride,
        "padding": padding,
        "ceil_mode": src.chance(0.4),
    }
    if dilated:
        dilation = param_list(src, 2, 1, 2, p_edge)
        if family == 2:
            dilation = (src.choice((0, -1, -3, 2**62, 2**61, 2**32)), src.integer(1, 2))
        arguments["dilation"] = dilation
    return arguments


def divisor(src: Source, small: bool) -> int | None:
    """avg_pool2d's override: usually none, else small, now and then an edge."""
    if src.chance(0.7):
        return None
    return edge_int64(src) if not small and src.chance(0.2) else src.integer(-2, 9)
