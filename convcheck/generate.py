"""Build cases by construction from a stream of choices, biased to where checks break.

One construction, several drivers: a ``Source`` answers ``integer``, ``choice`` and
``chance``. ``RandomSource`` is a seeded ``random.Random`` (fast: the engine's bulk
generation); the Hypothesis strategies in ``convcheck.strategies`` and the atheris
harnesses drive the same construction (each op's ``build_case``) through their own
sources, so every engine reaches the same case space and shrinks or mutates in its own way.

An op's construction makes most calls get far into the checks, then pushes one or two
arguments to an edge, with the draws this module holds: 0, +-1, powers of two and their
neighbours, the int32 and int64 bounds, sizes that make a product cross a bound.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator
from itertools import islice
from typing import Protocol

from convcheck import registry
from convcheck.case import DTYPES, Case, channels_last_order
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


def random_cases(
    seed: int, count: int, small: bool = False, op: str = registry.DEFAULT_OP
) -> list[Case]:
    build = registry.get(op).build_case
    src = RandomSource(seed)
    return [build(src, small) for _ in range(count)]


# How often a case of the op's ``build_case`` gives way to one of a family it almost never
# makes (the op's ``rare``).
RARE = 1 / 256


def stream(seed: int, op: str = registry.DEFAULT_OP) -> Iterator[Case]:
    """The random engine's cases for ``seed``: the op's construction over a seeded
    ``RandomSource``, now and then (``RARE``) one of its rare families instead."""
    the_op = registry.get(op)
    build, families = the_op.build_case, the_op.rare
    src = RandomSource(seed)
    # A stream of its own: every case of the main stream stays the same (some are replaced).
    rare = RandomSource(-1 - seed)
    while True:
        case = build(src)
        if families and rare.chance(RARE):
            case = rare.choice(families)(rare)
        yield case


def chunk(seed: int, index: int, count: int, op: str = registry.DEFAULT_OP) -> list[Case]:
    """The ``index``-th chunk of a sharded campaign's cases: the start of a stream of its
    own, so that a shard makes it from three numbers, the parent generating nothing."""
    digest = hashlib.blake2b(f"{seed}:{index}".encode(), digest_size=8).digest()
    return list(islice(stream(int.from_bytes(digest, "little"), op), count))
