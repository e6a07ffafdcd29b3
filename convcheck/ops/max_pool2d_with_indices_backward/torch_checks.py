"""The torch mapping of ``max_pool2d_with_indices_backward``: ATen's checks in Python (the
check path), the normaliser of torch's messages, and the real call.

ATen (``DilatedMaxPool2d.cpp``, torch 2.13), in order: kernel_size of one or two values,
stride of none, one or two (none: the kernel size), padding and dilation of one or two,
each value downcast to int (``safe_downcast``: outside int32 is an error); grad_output in
input's dtype; the input's memory format (channels-last wants 4-D) and rank 3 or 4;
per spatial dim ``pooling_output_shape`` (stride not 0, padding >= 0 and at most half the
effective kernel, then the floor-divided size); ``pool2d_shape_check`` (kernel, stride,
dilation > 0; no empty dim but the batch; padding at most half the kernel; an output of
at least 1); then grad_output's and indices' sizes against the pooled ones (the meta
function in ``torch/_meta_registrations.py`` compares the last three dims only; the C++
compares the batch too); then the dtype (floating only). Index values: none.
"""

from __future__ import annotations

import re
from typing import Any

from convcheck.case import channels_last_order
from convcheck.fixedint import INT32_MAX, INT32_MIN
from convcheck.ops.max_pool2d_with_indices_backward.case import MaxPoolBackwardCase
from convcheck.ops.max_pool2d_with_indices_backward.checks import FLOAT_DTYPES
from convcheck.outcome import Outcome

__all__ = ["TORCH_OVERFLOW", "check_path", "normalize", "real_outcome"]

# The check path's answer where torch's own arithmetic overflows: real torch's verdict
# there is its compiler's, not a rule (the tests compare everywhere else).
TORCH_OVERFLOW = "torch.int_overflow"

_MESSAGES = (
    (r"kernel_size must (either be|be either)", "kernel_size.length"),
    (r"stride must (either be|be either)", "stride.length"),
    (r"padding must (either be|be either)", "padding.length"),
    (r"dilation must (either be|be either)", "dilation.length"),
    (r"value cannot be converted to type int", "torch.downcast"),
    (r"dtype .* for `gradOutput`", "dtype.mismatch"),
    (r"tensor expected for input|tensor with optional 0 dim batch size", "input.shape"),
    (r"stride should not be zero|stride should be greater than zero", "stride.range"),
    (r"pad must be non-negative", "padding.range"),
    (r"pad should be", "padding.gt_half_kernel"),
    (r"kernel size should be greater than zero", "kernel_size.range"),
    (r"dilation should be greater than zero", "dilation.range"),
    (r"Output size is too small", "output.invalid"),
    (r"not implemented for", "dtype.unsupported"),
)
_COMPILED = tuple((re.compile(pattern), check) for pattern, check in _MESSAGES)


def normalize(message: str, case: MaxPoolBackwardCase | None = None) -> str:
    """The check id of torch's message (a size check names the tensor it read: torch's
    message names the dim only, so grad_output's is told from indices' by the case)."""
    if "Expected a tensor of dimension" in message:
        if case is None or not isinstance(_pooled(case), list):
            return "grad_output.sizes"
        return (
            "grad_output.sizes" if _dims_differ(case, case.grad_output.sizes) else "indices.sizes"
        )
    for pattern, check in _COMPILED:
        if pattern.search(message):
            return check
    return "torch.unknown: " + message.splitlines()[0] if message else "torch.unknown"


def _wrap32(value: int) -> int:
    return (value - INT32_MIN) % 2**32 + INT32_MIN


def _unpack(values: tuple[int, ...]) -> tuple[int, int]:
    return values[0], values[0] if len(values) == 1 else values[1]


def _pooled(case: MaxPoolBackwardCase) -> list[int] | Outcome:
    """The pooled (H, W), or the rejection on the way."""
    kernel, stride, padding, dilation = (
        case.kernel_size, case.stride, case.padding, case.dilation
    )  # fmt: skip
    for name, values, lengths in (
        ("kernel_size", kernel, (1, 2)),
        ("stride", stride, (0, 1, 2)),
        ("padding", padding, (1, 2)),
        ("dilation", dilation, (1, 2)),
    ):
        if len(values) not in lengths:
            return Outcome.reject(f"{name}.length")
        if any(not INT32_MIN <= v <= INT32_MAX for v in values[:2]):
            return Outcome.reject("torch.downcast")
    k = _unpack(kernel)
    s = _unpack(stride) if stride else k
    p, d = _unpack(padding), _unpack(dilation)
    if case.input.dtype != case.grad_output.dtype:
        return Outcome.reject("dtype.mismatch")
    sizes, rank = case.input.sizes, case.input.rank
    channels_last = rank == 4 and case.input.order == channels_last_order(4)
    if rank not in (3, 4) or (channels_last and rank != 4):
        return Outcome.reject("input.shape")
    out = []
    for i in range(2):
        if s[i] == 0:
            return Outcome.reject("stride.range")
        if p[i] < 0:
            return Outcome.reject("padding.range")
        # The padding's bound is int64 and truncates as C divides. The output size's
        # dilated kernel is a product of C ints: past int32 it is torch's own undefined
        # behaviour, and its build answers either way (kernel 2^31-1, dilation 2 wraps;
        # kernel 3, dilation 2^30+1 does not: measured), so no answer is claimed.
        effective = (k[i] - 1) * d[i] + 1
        if p[i] > abs(effective) // 2 * (1 if effective >= 0 else -1):
            return Outcome.reject("padding.gt_half_kernel")
        dilated = d[i] * (k[i] - 1)
        if dilated != _wrap32(dilated):
            return Outcome.reject(TORCH_OVERFLOW)
        n = sizes[rank - 2 + i]
        extra = s[i] - 1 if case.ceil_mode else 0
        size = (n + 2 * p[i] - dilated - 1 + extra) // s[i] + 1  # div_rtn: floor
        if case.ceil_mode and (size - 1) * s[i] >= n + p[i]:
            size -= 1
        out.append(size)
    if min(k) <= 0:
        return Outcome.reject("kernel_size.range")
    if min(s) <= 0:
        return Outcome.reject("stride.range")
    if min(d) <= 0:
        return Outcome.reject("dilation.range")
    if min(sizes[1:]) == 0 or (rank == 3 and sizes[0] == 0):
        return Outcome.reject("input.shape")
    if k[1] // 2 < p[1] or k[0] // 2 < p[0]:
        return Outcome.reject("padding.gt_half_kernel")
    if min(out) < 1:
        return Outcome.reject("output.invalid")
    return out


def _dims_differ(case: MaxPoolBackwardCase, sizes: tuple[int, ...]) -> bool:
    pooled = _pooled(case)
    assert isinstance(pooled, list)
    return sizes != (*case.input.sizes[:-2], *pooled)


def check_path(case: MaxPoolBackwardCase) -> Outcome:
    """ATen's verdict on ``case``, nothing allocated: grad_input has the input's sizes."""
    pooled = _pooled(case)
    if isinstance(pooled, Outcome):
        return pooled
    if _dims_differ(case, case.grad_output.sizes):
        return Outcome.reject("grad_output.sizes")
    if _dims_differ(case, case.indices.sizes):
        return Outcome.reject("indices.sizes")
    if case.input.dtype not in FLOAT_DTYPES:
        return Outcome.reject("dtype.unsupported")
    return Outcome.accept(case.input.sizes)


def real_outcome(case: MaxPoolBackwardCase) -> Outcome:
    """Real ``aten.max_pool2d_with_indices_backward`` on small tensors whose indices hold
    0 everywhere (a position in every plane: torch would write where any other value
    points, unchecked)."""
    import torch

    def make(spec: Any, dtype: str) -> Any:
        t = torch.zeros(spec.sizes, dtype=getattr(torch, dtype))
        if spec.rank == 4 and spec.order == channels_last_order(4):
            t = t.contiguous(memory_format=torch.channels_last)
        return t

    args = (
        make(case.grad_output, case.grad_output.dtype),
        make(case.input, case.input.dtype),
        list(case.kernel_size),
        list(case.stride),
        list(case.padding),
        list(case.dilation),
        case.ceil_mode,
        make(case.indices, "int64"),
    )
    try:
        result = torch.ops.aten.max_pool2d_with_indices_backward.default(*args)
    except RuntimeError as error:
        return Outcome.reject(normalize(str(error), case))
    return Outcome.accept(list(result.shape))
