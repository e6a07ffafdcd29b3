"""The intentional differences of the pooling kernels from torch: calls on which the
kernel and ATen may part and neither is wrong, each with its reason. The torch judge
(and the tests that hold ``current`` to ATen's check path) ask ``explain_difference``."""

from __future__ import annotations

from typing import Any

from convcheck.outcome import REJECT, Outcome

# Refusals of the kernel that torch has no reason to make.
REASONS = {
    # The case's out (and indices) are the kernel's; torch's functional call makes its own.
    "dtype.mismatch": "out's dtype is the caller's: torch makes its own out",
    "indices.dtype": "indices is the caller's: torch makes its own",
    "dim_order.out": "out's dim order is the caller's: torch makes its own out",
    "out.resize": "out's rank is the caller's: torch makes its own out",
    "indices.resize": "indices' rank is the caller's: torch makes its own",
    "dim_order.input": "ExecuTorch defines no dim order but contiguous and channels-last",
    # ExecuTorch's sizes and strides are 32 bits; torch's 64.
    "output.too_large": "an output size past INT32_MAX does not fit ExecuTorch's size type",
    "output.stride_too_large": "out's strides would not fit ExecuTorch's int32 strides",
    "indices.stride_too_large": "indices' strides would not fit ExecuTorch's int32 strides",
    "input.stride_too_large": "input's strides would not fit ExecuTorch's int32 strides",
}


def explain_difference(
    case: Any, revision: str, kernel: Outcome, torch: Outcome, verdict: Any = None
) -> str | None:
    """Why the kernel may answer ``kernel`` where torch answers ``torch``, or None."""
    if getattr(verdict, "torch_bug", None):
        return f"torch's own bug: {verdict.torch_bug}"
    if kernel.verdict == REJECT and torch.verdict != REJECT:
        return REASONS.get(kernel.check or "")
    return None
