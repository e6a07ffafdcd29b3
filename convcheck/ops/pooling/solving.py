"""The pooling kernels' shapes for the solver: the concrete skeleton of a call.

Enumerated: the input's rank (3 or 4), ``ceil_mode``, the stride given (two values) or
omitted (the kernel size then), and for avg_pool2d ``count_include_pad`` and whether a
divisor override is given. The solver makes every size and int64 argument symbolic.
Lists have two elements: one element applies its value to both dims, the same arithmetic
with them equal; other lengths, dtype mismatches and dim orders are refused before any
arithmetic and add no site.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from convcheck.registry import SYMBOLIC, TensorSkeleton


@dataclass(frozen=True)
class PoolShape:
    op: str
    rank: int
    ceil_mode: bool
    strided: bool  # a stride list of two, or none (the kernel size)
    count_include_pad: bool = False  # avg_pool2d's
    divisor: bool = False  # avg_pool2d's: an override given

    kind = "pool"

    @property
    def work(self) -> tuple:
        """Rank 4 and ceil_mode fork the most."""
        return (-self.rank, not self.ceil_mode)

    @property
    def key(self) -> str:
        flags = (self.ceil_mode, self.strided, self.count_include_pad, self.divisor)
        return f"{self.rank}" + "".join("cspd"[i] if flag else "-" for i, flag in enumerate(flags))

    def skeleton(self) -> dict[str, Any]:
        tensor = TensorSkeleton(self.rank)
        skeleton: dict[str, Any] = {
            "input": tensor,
            "out": tensor,
            "kernel_size": 2,
            "stride": 2 if self.strided else (),
            "padding": 2,
            "ceil_mode": self.ceil_mode,
        }
        if self.op == "max_pool2d_with_indices":
            skeleton["indices"] = TensorSkeleton(self.rank, "int64")
            skeleton["dilation"] = 2
        else:
            skeleton["count_include_pad"] = self.count_include_pad
            skeleton["divisor_override"] = SYMBOLIC if self.divisor else None
            skeleton["int64_fill"] = None  # values are the fuzzer's: no walk of windows
        return skeleton

    def describe(self) -> str:
        parts = [f"rank {self.rank}", "ceil_mode" if self.ceil_mode else "floor"]
        parts.append("strided" if self.strided else "stride omitted")
        if self.op == "avg_pool2d":
            parts.append("count_include_pad" if self.count_include_pad else "padding excluded")
            parts.append("divisor override" if self.divisor else "no divisor override")
        return ", ".join(parts)


def shapes(op: str, ranks: Any = None) -> list[PoolShape]:
    avg = op == "avg_pool2d"
    return [
        PoolShape(op, rank, ceil_mode, strided, include_pad, divisor)
        for rank in (3, 4)
        if ranks is None or rank in ranks
        for strided in (True, False)
        for ceil_mode in (False, True)
        for include_pad in ((False, True) if avg else (False,))
        for divisor in ((False, True) if avg else (False,))
    ]


def default_ranks(revision: str) -> tuple[int, ...]:
    """Rank 3 holds every site (rank 4 adds a batch dim the arithmetic never reads)."""
    return (3,)
