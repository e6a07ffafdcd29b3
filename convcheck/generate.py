"""Build cases by construction from a stream of choices, biased to where checks break.

One construction, several drivers: a ``Source`` answers ``integer``, ``choice`` and
``chance``. ``RandomSource`` is a seeded ``random.Random`` (fast: the engine's bulk
generation); the Hypothesis strategies in ``convcheck.strategies`` and the atheris
harnesses drive the same ``build_case`` through their own sources, so every engine reaches
the same case space and shrinks or mutates in its own way.

Most draws make a call that gets far into the checks (matching channels, a kernel that
fits), then one or two arguments are pushed to an edge: 0, +-1, powers of two and their
neighbours, the int32 and int64 bounds, products that cross a bound.
"""

from __future__ import annotations

import random
from typing import Protocol

from convcheck.case import DTYPES, Case, TensorSpec, channels_last_order
from convcheck.fixedint import INT32_MAX, INT64_MAX, INT64_MIN


class Source(Protocol):
    def integer(self, low: int, high: int) -> int: ...
    def choice(self, options: tuple): ...
    def chance(self, p: float) -> bool: ...


class RandomSource:
    """A seeded ``random.Random``'s draws, as ``randint`` and ``randrange`` make them (a
    seed's cases stay what they were), without their argument checks' three frames a
    draw: bulk generation draws some fifty times a case."""

    def __init__(self, seed: int) -> None:
        self._random = random.Random(seed)
        self._bits = self._random.getrandbits
        self._float = self._random.random

    def integer(self, low: int, high: int) -> int:
        # ``randrange``'s draw for n >= 1: the fewest random bits that can hold n - 1,
        # drawn again until below n (inline: a frame a draw, some forty a case).
        n = high - low + 1
        k = n.bit_length()
        r = self._bits(k)
        while r >= n:
            r = self._bits(k)
        return low + r

    def choice(self, options: tuple):
        return options[self.integer(0, len(options) - 1)]

    def chance(self, p: float) -> bool:
        return self._float() < p


_POWERS = tuple(2**k for k in (8, 15, 16, 30, 31, 32, 40, 61, 62))
# Values where an int64 argument breaks a check or an expression.
EDGE_INT64 = (
    0,
    1,
    -1,
    2,
    -2,
    3,
    INT32_MAX,
    INT32_MAX + 1,
    -(2**31),
    INT64_MAX,
    INT64_MAX - 1,
    INT64_MIN,
    INT64_MIN + 1,
    *_POWERS,
    *(p + 1 for p in _POWERS),
    *(p - 1 for p in _POWERS),
)
# Sizes that push a product or a sum past a bound.
EDGE_SIZES = (0, 1, 2, 2**15, 2**16, 2**30, INT32_MAX - 1, INT32_MAX)
LAYOUTS = ("contiguous",) * 6 + ("channels_last",) * 3 + ("mixed",)


def edge_int64(src: Source) -> int:
    return src.choice(EDGE_INT64)


def small_or_edge(src: Source, low: int, high: int, p_edge: float) -> int:
    return edge_int64(src) if src.chance(p_edge) else src.integer(low, high)


def size(src: Source, low: int, high: int, p_edge: float) -> int:
    return src.choice(EDGE_SIZES) if src.chance(p_edge) else src.integer(low, high)


def dim_order(src: Source, rank: int, layout: str) -> tuple[int, ...] | None:
    """``layout`` is drawn once per case, so most cases are consistently laid out."""
    if layout == "mixed":
        layout = src.choice(("contiguous", "channels_last", "permuted"))
    if layout == "contiguous":
        return None
    if layout == "channels_last":
        return channels_last_order(rank)
    order = list(range(rank))
    for i in range(rank - 1, 0, -1):
        j = src.integer(0, i)
        order[i], order[j] = order[j], order[i]
    return tuple(order)


def param_list(src: Source, ndim: int, low: int, high: int, p_edge: float) -> tuple[int, ...]:
    """Usually one value or one per dim; sometimes a wrong length."""
    roll = src.integer(0, 19)
    length = 1 if roll < 8 else ndim if roll < 18 else src.integer(0, ndim + 2)
    return tuple(small_or_edge(src, low, high, p_edge) for _ in range(length))


def dtype(src: Source) -> str:
    return "float32" if src.chance(0.7) else src.choice(DTYPES)


def build_case(src: Source, small: bool = False) -> Case:
    """A call, usually valid in most respects, with a few arguments at their edges.

    ``small`` keeps every tensor within a few thousand elements, for judges that compute.
    """
    p_edge = 0.0 if small else 0.08
    rank = src.choice((3, 4, 5)) if src.chance(0.93) else src.choice((1, 2, 6))
    ndim = max(rank - 2, 0)
    transposed = src.chance(0.35)
    groups = src.choice((1, 1, 1, 2, 3)) if src.chance(0.9) else edge_int64(src)
    group_size = max(groups, 1) if 0 < groups <= 4 else 1
    per_group_in = src.integer(0 if src.chance(0.05) else 1, 3)
    per_group_out = src.integer(0 if src.chance(0.05) else 1, 3)
    kernel = [size(src, 0 if src.chance(0.05) else 1, 3, p_edge / 2) for _ in range(ndim)]
    stride = param_list(src, ndim, 1, 3, p_edge)
    padding = param_list(src, ndim, 0, 2, p_edge)
    dilation = param_list(src, ndim, 1, 2, p_edge)
    output_padding = param_list(src, ndim, 0, 1, p_edge)
    batch = size(src, 0 if src.chance(0.05) else 1, 2, p_edge / 2)
    spatial = [
        size(src, 0 if src.chance(0.05) else 1, 6 if ndim < 3 else 4, p_edge) for _ in range(ndim)
    ]
    if transposed:
        w_sizes = [group_size * per_group_in, per_group_out, *kernel]
        in_channels, out_channels = w_sizes[0], group_size * per_group_out
    else:
        w_sizes = [group_size * per_group_out, per_group_in, *kernel]
        in_channels, out_channels = group_size * per_group_in, w_sizes[0]
    if src.chance(0.05):
        in_channels = size(src, 0, 5, p_edge)
    if src.chance(0.05):
        w_sizes[src.integer(0, 1)] = size(src, 0, 5, p_edge)
    in_sizes = [batch, in_channels, *spatial][:rank]
    w_rank = rank if src.chance(0.95) else src.choice((2, 3, 4, 5))
    w_sizes = (w_sizes + [1] * w_rank)[:w_rank]
    out_rank = rank if src.chance(0.97) else src.choice((3, 4, 5))
    layout = src.choice(LAYOUTS)
    base_dtype = dtype(src)
    dtypes = [base_dtype if src.chance(0.95) else dtype(src) for _ in range(3)]
    bias = None
    if src.chance(0.6):
        roll = src.integer(0, 19)
        length = out_channels if roll < 15 else size(src, 0, 5, p_edge)
        sizes = (length,) if roll != 19 else (length, 1)
        bias = TensorSpec(sizes, base_dtype if src.chance(0.85) else dtype(src))
    return Case(
        input=TensorSpec(tuple(in_sizes), dtypes[0], dim_order(src, len(in_sizes), layout)),
        weight=TensorSpec(tuple(w_sizes), dtypes[1], dim_order(src, w_rank, layout)),
        bias=bias,
        out=TensorSpec(tuple([1] * out_rank), dtypes[2], dim_order(src, out_rank, layout)),
        stride=stride,
        padding=padding,
        dilation=dilation,
        transposed=transposed,
        output_padding=output_padding,
        groups=groups,
    )


def empty_input_with_strides_past_int32(src: Source) -> Case:
    """A transposed 2-D call whose input is empty (a spatial dim of 0) while its channels
    times its other spatial dim pass INT32_MAX: its strides, in which a size of 0 counts
    as 1, do not fit int32, yet out is small and not empty, so the loops run and compute
    them. ``build_case`` almost never makes one: it needs a 0, a huge size, and the padding
    that brings that size's output back to a few positions, all at once."""
    channels = src.choice((2, 3, 64, 1024))
    width = INT32_MAX // channels + 1 + src.integer(0, 2)
    kernel = src.integer(2, 3)  # the empty dim's output size is kernel - 1
    out_width = src.integer(1, 3)
    out_width += (width - out_width) % 2  # out width = width - 2 * padding
    bias = TensorSpec((1,), "float32") if src.chance(0.5) else None
    return Case(
        input=TensorSpec((1, channels, 0, width), "float32"),
        weight=TensorSpec((channels, 1, kernel, 1), "float32"),
        bias=bias,
        out=TensorSpec((1, 1, 1, 1), "float32"),
        stride=(1, 1),
        padding=(0, (width - out_width) // 2),
        dilation=(1, 1),
        transposed=True,
        output_padding=(0, 0),
        groups=1,
    )


def random_cases(seed: int, count: int, small: bool = False) -> list[Case]:
    src = RandomSource(seed)
    return [build_case(src, small) for _ in range(count)]
