"""Where ``current`` refuses a call torch accepts, on purpose: each check id with its
reason. Nothing else may part the two (``tests/ops/constant_pad_nd`` holds them to it)."""

from __future__ import annotations

from types import MappingProxyType

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
