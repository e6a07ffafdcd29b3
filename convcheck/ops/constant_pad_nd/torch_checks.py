"""The torch mapping of ``constant_pad_nd``: ``aten.constant_pad_nd``'s checks in Python
(the check path), the normaliser of torch's messages to check ids, and the real call.

ATen (``PadNd.cpp``, torch 2.13), in order: the dispatcher turns ``pad`` into SymInts
(a value below -2^62 cannot be one); the length is even and at most twice the input's
rank; each padded dim, outermost first, is narrowed by its negative pads (a dim cannot
lose more than its size); a call whose pads are all <= 0 returns the cropped input, with
no fill and so no check of the value; otherwise each size is ``size + before + after``
in int64 (wrapping: torch's own overflow, answered as torch answers it, negative), then
the output is allocated and filled with the value, which must fit the dtype
(``c10::overflows``, even where out is empty). torch has no out dtype, rank or dim order
to check: the functional op makes its output, and the ``.out`` variant resizes and casts.

Not modelled: memory itself running out; a huge accepted output is answered "accept"
with ATen's sizes.

``check_path`` is what a torch judge for this op asks first (torch's mapping as an op
member plugs it in as it is); ``real_outcome`` is real torch, in this process (padding
never crashes torch), for the tests that hold the check path to it.
"""

from __future__ import annotations

import re
from typing import Any

from convcheck.fixedint import INT64_MAX
from convcheck.ops.constant_pad_nd.case import ConstantPadNdCase
from convcheck.ops.constant_pad_nd.checks import value_overflows
from convcheck.ops.convolution.torch_oracle.aten import SYMINT_MIN, storage_problem
from convcheck.outcome import Outcome

__all__ = ["check_path", "normalize", "real_outcome"]

# torch's messages, first match wins -> check id
_MESSAGES = (
    (r"SymIntArrayRef expected to contain only concrete integers", "pad.range"),
    (r"Length of pad must be even", "pad.odd_length"),
    (r"Length of pad should be no more than twice", "pad.too_long"),
    (
        r"narrow\(\): length must be non-negative|resulted in a negative output size",
        "output.negative",
    ),
    (r"Storage size calculation overflowed|Stride calculation overflowed", "torch.size_overflow"),
    (r"DefaultCPUAllocator: can't allocate memory", "torch.alloc"),
    (r"value cannot be converted to type .* without overflow", "value.overflow"),
)
_COMPILED = tuple((re.compile(pattern), check) for pattern, check in _MESSAGES)


def normalize(message: str) -> str:
    """The check id of torch's message; ``torch.unknown: <first line>`` for a new one."""
    for pattern, check in _COMPILED:
        if pattern.search(message):
            return check
    return "torch.unknown: " + message.splitlines()[0] if message else "torch.unknown"


def _wrap64(value: int) -> int:
    return (value + INT64_MAX + 1) % 2**64 - INT64_MAX - 1


def check_path(case: ConstantPadNdCase) -> Outcome:
    """ATen's verdict on ``case``, for any sizes, nothing allocated."""
    sizes, pad = case.input.sizes, case.pad
    if any(p < SYMINT_MIN for p in pad):
        return Outcome.reject("pad.range")
    if len(pad) % 2:
        return Outcome.reject("pad.odd_length")
    rank, pairs = len(sizes), len(pad) // 2
    if pairs > rank:
        return Outcome.reject("pad.too_long")
    padded = range(rank - pairs, rank)
    cropped = list(sizes)
    for d in padded:
        for p in _pair(pad, rank, d):
            if p < 0:
                if cropped[d] + p < 0:
                    return Outcome.reject("output.negative")
                cropped[d] += p
    if all(p <= 0 for p in pad):
        return Outcome.accept(cropped)
    out = list(sizes)
    for d in padded:
        before, after = _pair(pad, rank, d)
        out[d] = _wrap64(sizes[d] + before + after)
        if out[d] < 0:
            return Outcome.reject("output.negative")
    if storage_problem(out, case.input.dtype) is not None:
        return Outcome.reject("torch.size_overflow")
    if value_overflows(case.value, case.input.dtype):
        return Outcome.reject("value.overflow")
    return Outcome.accept(out)


def _pair(pad: tuple[int, ...], rank: int, dim: int) -> tuple[int, int]:
    pair = rank - 1 - dim
    return pad[2 * pair], pad[2 * pair + 1]


def real_outcome(case: ConstantPadNdCase) -> Outcome:
    """Real ``aten.constant_pad_nd`` on a zero-filled input of ``case``'s sizes and dtype
    (keep them small: it allocates)."""
    import torch

    x: Any = torch.zeros(case.input.sizes, dtype=getattr(torch, case.input.dtype))
    try:
        result = torch.ops.aten.constant_pad_nd.default(x, list(case.pad), case.value)
    except RuntimeError as error:
        return Outcome.reject(normalize(str(error)))
    return Outcome.accept(list(result.shape))
