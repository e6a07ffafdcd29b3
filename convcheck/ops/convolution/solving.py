"""Convolution's shapes for the solver: the concrete skeleton of a call.

The rank (3, 4, and 5 where the revision accepts it), transposed or not, and the bias
(absent, a real dtype, bool) are enumerated; the solver makes every size and int64
argument symbolic. Parameter lists have one element per spatial dim: a list of length 1
applies its one value to every dim, which is the same arithmetic with the elements equal,
so it adds no path; other lengths, dtype mismatches, non-contiguous dim orders and a bool
input are rejected before any arithmetic, or (bool input) just before the loops, and add
no site. A regular convolution never reads its output padding: it is pinned at 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from convcheck.registry import SYMBOLIC, TensorSkeleton

# Where an input that passes a check has no bias, transposed or spatial dims to spare,
# the witness is easier to read: configurations go simplest first.
BIAS_KINDS = (None, "float32", "bool")


@dataclass(frozen=True)
class ConvolutionShape:
    rank: int
    transposed: bool
    bias: str | None  # None, or the bias dtype

    op = "convolution"

    @property
    def ndim(self) -> int:
        return self.rank - 2

    @property
    def kind(self) -> str:
        return "transposed" if self.transposed else "regular"

    @property
    def work(self) -> tuple:
        """A rank's transposed shapes take several times its regular ones (their
        output sizes fork on every spatial dim), and a bool bias the least (``current``
        rejects it at once; on ``legacy`` a float32 bias takes longer)."""
        return (-self.rank, not self.transposed, self.bias == "bool")

    @property
    def key(self) -> str:
        return f"{self.rank}{'t' if self.transposed else 'r'}{self.bias or ''}"

    def skeleton(self) -> dict[str, Any]:
        n, tensor = self.ndim, TensorSkeleton(self.rank)
        return {
            "input": tensor,
            "weight": tensor,
            "bias": None if self.bias is None else TensorSkeleton(1, self.bias),
            "out": tensor,
            "stride": n,
            "padding": n,
            "dilation": n,
            "transposed": self.transposed,
            "output_padding": n if self.transposed else (0,) * n,
            "groups": SYMBOLIC,
        }

    def describe(self) -> str:
        bias = "no bias" if self.bias is None else f"{self.bias} bias"
        return f"rank {self.rank} {self.kind}, {bias}"


def solver_shapes(revision: str, ranks=None) -> list[ConvolutionShape]:
    modelled = (3, 4, 5) if revision != "legacy" else (3, 4)
    return [
        ConvolutionShape(rank, transposed, bias)
        for rank in modelled
        if ranks is None or rank in ranks
        for bias in BIAS_KINDS
        for transposed in (False, True)
    ]


def seed_shapes(revision: str) -> tuple[ConvolutionShape, ...]:
    """The default engine's seeds: a regular call with a float32 bias meets every site a
    regular call meets; a transposed bias caps ``groups * w.size(1)`` at its int32
    length, so the transposed call goes without one too; a bool bias is refused before
    any arithmetic."""
    return (
        ConvolutionShape(3, False, "float32"),
        ConvolutionShape(3, True, "float32"),
        ConvolutionShape(3, True, None),
    )


def default_ranks(revision: str) -> tuple[int, ...]:
    """Every rank ``current`` accepts (its proof is the point), and ``legacy``'s rank 3,
    where every crash, overflow and ordering class of ``known_bugs.py`` has its witness
    (its rank-4 shapes add no class and take minutes each)."""
    return (3,) if revision == "legacy" else (3, 4, 5)
