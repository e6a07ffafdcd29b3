"""Where ``current`` refuses a call torch accepts, on purpose: each check id with its
reason, and ``explain_difference``, the op's torch mapping's ``explain``. Nothing else may
part the two (``tests/ops/test_constant_pad_nd.py`` holds them to it)."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from convcheck.fixedint import INT32_MAX, INT32_MIN
from convcheck.ops.convolution.torch_oracle.aten import SYMINT_MIN, storage_problem
from convcheck.outcome import ACCEPT, REJECT, Outcome

INTENTIONAL = MappingProxyType(
    {
        "dtype.mismatch": "the kernel writes out in input's dtype; torch's out variant casts",
        "rank.out": "out's rank is the call's to give; torch's out variant resizes any rank",
        "dim_order.in_out": "the kernel walks input and out in one dim order",
        "pad.range": "a pad past 32 bits makes a size the int32 size type cannot hold; "
        "torch accepts one only beside an empty dim",
        "output.too_large": "the tensor library's sizes are int32",
        "out.resize": "the tensor library's numel is an ssize_t",
        "output.stride_too_large": "the tensor library's strides are int32",
    }
)


def explain_difference(
    case: Any, revision: str, kernel: Outcome, torch: Outcome, verdict: Any = None
) -> str | None:
    """Why the kernel may answer ``kernel`` where torch answers ``torch``, or None. A
    refusal of ``pad.range`` is intentional only for a pad past 32 bits (legacy's of a
    negative one is its bug); torch's dispatcher refuses a pad below -2^62 before any
    check, so there torch's id comes first whatever the kernel refuses for; and torch's
    allocation of an out of more bytes than int64 counts is no check a kernel handed its
    out can make (legacy's narrowed out, which torch would size otherwise, is not that).
    """
    check = kernel.check or ""
    if kernel.verdict == REJECT and check in INTENTIONAL:
        if check != "pad.range" or any(p < INT32_MIN or p > INT32_MAX for p in case.pad):
            return INTENTIONAL[check]
    if kernel.verdict == REJECT and torch.check == "pad.range" and min(case.pad) < SYMINT_MIN:
        return "torch's dispatcher refuses a pad below -2^62 before its checks"
    if (
        kernel.verdict == ACCEPT
        and torch.check == "torch.size_overflow"
        and storage_problem(kernel.out_sizes or (), case.input.dtype) is not None
    ):
        return (
            "torch refuses to allocate an out whose bytes pass int64; the kernel is given "
            "out, allocated by its caller, who cannot allocate one either"
        )
    return None
