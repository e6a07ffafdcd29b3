"""``constant_pad_nd``'s shapes for the solver: the input's rank and dtype and how many
pairs the pad list has (one per padded dim, the last dims first) are enumerated; every
size, pad and the value are symbolic. Other pad lengths are rejected before any
arithmetic and add no site; a float32 input never overflows on its value, a uint8 one
can, so both are solved."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from convcheck.registry import SYMBOLIC, TensorSkeleton

DTYPES = ("float32", "uint8")


@dataclass(frozen=True)
class PadShape:
    rank: int
    pairs: int
    dtype: str

    op = "constant_pad_nd"
    kind = "pad"

    @property
    def work(self) -> tuple:
        return (-self.rank, -self.pairs)

    @property
    def key(self) -> str:
        return f"{self.rank}p{self.pairs}{self.dtype}"

    def skeleton(self) -> dict[str, Any]:
        tensor = TensorSkeleton(self.rank, self.dtype)
        return {"input": tensor, "pad": 2 * self.pairs, "value": SYMBOLIC, "out": tensor}

    def describe(self) -> str:
        return f"rank {self.rank} {self.dtype}, {self.pairs} dim(s) padded"


def solver_shapes(revision: str, ranks=None) -> list[PadShape]:
    return [
        PadShape(rank, pairs, dtype)
        for rank in ranks or default_ranks(revision)
        for pairs in range(rank + 1)
        for dtype in DTYPES
    ]


def default_ranks(revision: str) -> tuple[int, ...]:
    """Every class shows in one or two dims; a third adds paths, not sites."""
    return (1, 2)
