"""The planned memory of a crafted program: what fits a whole run, and how it is laid out.

ExecuTorch's kernels only run whole: every tensor needs its bytes in the method's planned
memory (``set_inputs`` copies them in; the pybindings allocate, and zero, the whole
arena). A case whose tensors or work are too large for that is *probed* instead, each
op's target says how; ``Limits`` says where "too large" begins.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from convcheck.case import DTYPE_SIZES, TensorSpec

ALIGNMENT = 16  # bytes; exir's memory planner aligns every tensor to this


@dataclass(frozen=True)
class Limits:
    """Above these a case is probed (checks only), not run whole.

    ``max_arena_bytes`` bounds the planned memory of a whole run; ``max_work`` its loops
    (the op's target counts them); ``max_values`` the out elements whose values ``run``
    returns.
    """

    max_arena_bytes: int = 64 << 20
    max_work: int = 1 << 24
    max_values: int = 1 << 16


def nbytes(spec: TensorSpec) -> int:
    return spec.numel * DTYPE_SIZES[spec.dtype]


def sized_bytes(sizes: tuple[int, ...], dtype: str) -> int:
    return math.prod(sizes) * DTYPE_SIZES[dtype]


def aligned(n: int) -> int:
    return -(-n // ALIGNMENT) * ALIGNMENT


def max_stride(sizes: tuple[int, ...], order: tuple[int, ...]) -> int:
    """The largest stride of a tensor of ``sizes`` laid out in ``order``, as torch and
    ExecuTorch compute strides (a size 0 counts as 1)."""
    stride, largest = 1, 1
    for dim in reversed(order):
        largest = max(largest, stride)
        stride *= max(sizes[dim], 1)
    return largest
