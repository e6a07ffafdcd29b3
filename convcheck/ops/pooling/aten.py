"""ATen's check path for ``aten.avg_pool2d`` and ``aten.max_pool2d_with_indices``, in
Python: the verdict, check id and output sizes torch 2.13 gives any call, without a
tensor (so for any sizes), and the normaliser of its messages to our check ids.

Read from torch's own sources for facts (``ATen/native/Pool.h``: ``pooling_output_shape``
and ``pool2d_shape_check``; ``ATen/div_rtn.h``; the meta functions of
``AveragePool2d.cpp`` and ``DilatedMaxPool2d.cpp``, mirrored in
``torch/_meta_registrations.py``), in their order, with their arithmetic: int64 that
wraps (ATen is built without a sanitizer) and ``div_rtn``'s quotient held in an ``int``,
so an output size past 2^31 wraps as ATen's does. Held to real torch by
``tests/ops_pooling/test_aten.py``; the torch judge of the op interface calls ``check``.
"""

from __future__ import annotations

import re
from typing import Any

from convcheck.outcome import Outcome

INT32_MAX = 2**31 - 1

# torch's messages, by the check id each stands for (the first that matches).
MESSAGES = (
    (r"kernel_size must (either be|be either)", "kernel_size.length"),
    (r"stride must (either be|be either)", "stride.length"),
    (r"(padding|pad) must (either be|be either)", "padding.length"),
    (r"dilation must (either be|be either)", "dilation.length"),
    (r"divisor must be not zero", "divisor_override.zero"),
    (r"stride should not be zero|stride should be greater than zero", "stride.range"),
    (r"pad must be non-negative", "padding.range"),
    (r"pad should be (at most|smaller than or equal to) half", "padding.gt_half_kernel"),
    (r"kernel size should be greater than zero", "kernel_size.range"),
    (r"dilation should be greater than zero", "dilation.range"),
    (r"Output size is too small", "output.invalid"),
    (r"3D or 4D|Dimension out of range|4D \(batch mode\)", "input.shape"),
    (r"cannot be converted to type int without overflow", "window.past_int32"),
    (r"not implemented for", "dtype.unsupported"),
)


def normalize(message: str) -> str:
    """The check id of one of torch's messages ("torch.other" for none of ours)."""
    for pattern, check in MESSAGES:
        if re.search(pattern, message):
            return check
    return "torch.other"


class _Refused(Exception):
    def __init__(self, check: str) -> None:
        super().__init__(check)
        self.check = check


def _wrap(value: int, bits: int = 64) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _trunc_div(x: int, y: int) -> int:
    q = abs(x) // abs(y)
    return q if (x < 0) == (y < 0) else -q


def _div_rtn(x: int, y: int) -> int:
    """``div_rtn``: C's quotient and remainder, each stored into an ``int``. (Its
    INT64_MIN / -1 cannot come: every operand passed ``safe_downcast`` before.)"""
    q = _trunc_div(x, y)
    r = x - y * q
    q, r = _wrap(q, 32), _wrap(r, 32)
    if r != 0 and (r < 0) != (y < 0):
        q = _wrap(q - 1, 32)
    return q


def _c_half(value: int) -> int:
    """C's ``value / 2`` on int64 (toward zero)."""
    return _trunc_div(value, 2)


def pooling_output_shape(n: int, k: int, pad: int, stride: int, dilation: int, ceil: bool) -> int:
    if stride == 0:
        raise _Refused("stride.range")
    if pad < 0:
        raise _Refused("padding.range")
    if pad > _c_half(_wrap((k - 1) * dilation + 1)):
        raise _Refused("padding.gt_half_kernel")
    numerator = _wrap(n + 2 * pad - dilation * (k - 1) - 1 + (stride - 1 if ceil else 0))
    size = _wrap(_div_rtn(numerator, stride) + 1)
    if ceil and _wrap((size - 1) * stride) >= _wrap(n + pad):
        size = _wrap(size - 1)
    return size


def _pair(values: tuple[int, ...], check: str, lengths: tuple[int, ...] = (1, 2)) -> None:
    """A list's length (the meta functions then take its values in ``int``s)."""
    if len(values) not in lengths:
        raise _Refused(check)


def _downcast(values: tuple[int, ...]) -> None:
    """``safe_downcast<int, int64_t>``: a value outside int32 is refused."""
    if any(abs(v) > INT32_MAX and v != -(2**31) for v in values[:2]):
        raise _Refused("window.past_int32")


def _at(values: tuple[int, ...], i: int) -> int:
    return values[0] if len(values) == 1 else values[i]


def _shape_check(
    sizes: tuple[int, ...], window: list[tuple[int, int, int, int]], out: list[int]
) -> None:
    """``pool2d_shape_check`` (its channels-last branch asks what its other one does of
    a 4-D input)."""
    if any(k <= 0 for k, _, _, _ in window):
        raise _Refused("kernel_size.range")
    if any(s <= 0 for _, s, _, _ in window):
        raise _Refused("stride.range")
    if any(d <= 0 for _, _, _, d in window):
        raise _Refused("dilation.range")
    valid = sizes[1] != 0 and sizes[2] != 0
    if not (
        (len(sizes) == 3 and sizes[0] != 0 and valid)
        or (len(sizes) == 4 and valid and sizes[3] != 0)
    ):
        raise _Refused("input.shape")
    if any(_c_half(k) < p for k, _, p, _ in window):
        raise _Refused("padding.gt_half_kernel")
    if any(size < 1 for size in out):
        raise _Refused("output.invalid")


AVG_DTYPES = frozenset({"float32", "float64", "float16", "bfloat16", "int64"})


def _path(case: Any, op: str) -> list[int]:
    avg = op == "avg_pool2d"
    for values, check, lengths in (
        (case.kernel_size, "kernel_size.length", (1, 2)),
        (case.stride, "stride.length", (0, 1, 2)),
        (case.padding, "padding.length", (1, 2)),
    ):
        _pair(values, check, lengths)
        _downcast(values)
    if avg:
        if case.divisor_override == 0:
            raise _Refused("divisor_override.zero")
        dilation: tuple[int, ...] = (1,)
    else:
        _pair(case.dilation, "dilation.length")
        _downcast(case.dilation)
        dilation = case.dilation
        if case.input.rank not in (3, 4):
            raise _Refused("input.shape")
    sizes = case.input.sizes
    if len(sizes) < 3:
        raise _Refused("input.shape")  # ``input.size(-3)``: out of range
    window = []
    for i in range(2):
        k = _at(case.kernel_size, i)
        s = _at(case.stride, i) if case.stride else k
        window.append((k, s, _at(case.padding, i), _at(dilation, i)))
    out = [
        pooling_output_shape(sizes[-2 + i], *_ordered(window[i]), case.ceil_mode) for i in range(2)
    ]
    _shape_check(sizes, window, out)
    # The CPU kernels dispatch on the dtype.
    if (avg and case.input.dtype not in AVG_DTYPES) or case.input.dtype == "bool":
        raise _Refused("dtype.unsupported")
    return [*sizes[:-2], *out]


def _ordered(w: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
    """(kernel, stride, pad, dilation) as ``pooling_output_shape`` takes them."""
    k, s, p, d = w
    return k, p, s, d


def check(case: Any, op: str) -> Outcome:
    """torch's answer to ``case`` (a call of ``op``): accept with its output sizes, or
    reject with a check id. (torch also dies on avg_pool2d's int64 data holding INT64_MIN
    with a divisor override of -1: values, which no check path sees.)"""
    try:
        return Outcome.accept(_path(case, op))
    except _Refused as refused:
        return Outcome.reject(refused.check)


def call_torch(case: Any, op: str) -> Outcome:
    """Real torch on ``case`` (small tensors only: it allocates them), in this process:
    run it where torch may die (``check`` says where it does)."""
    import torch

    # Laid out in the case's dim order: the physical sizes, viewed in the logical order.
    order, sizes = case.input.order, case.input.sizes
    laid_out = torch.zeros([sizes[d] for d in order], dtype=getattr(torch, case.input.dtype))
    x = laid_out.permute([order.index(d) for d in range(len(order))])
    try:
        if op == "avg_pool2d":
            result = torch.ops.aten.avg_pool2d(
                x,
                list(case.kernel_size),
                list(case.stride),
                list(case.padding),
                case.ceil_mode,
                case.count_include_pad,
                case.divisor_override,
            )
        else:
            result, _ = torch.ops.aten.max_pool2d_with_indices(
                x,
                list(case.kernel_size),
                list(case.stride),
                list(case.padding),
                list(case.dilation),
                case.ceil_mode,
            )
    except (RuntimeError, IndexError, ValueError, TypeError) as e:
        message = str(e).splitlines()[0] if str(e) else type(e).__name__
        return Outcome.reject(normalize(message), detail=message)
    return Outcome.accept(result.shape)
