"""ATen's own integer arithmetic and messages, as torch 2.13's C++ writes them.

Pure Python, no torch import: the check path, its fallback and the normaliser share it.
Every product and sum goes through ``convcheck.fixedint.Wrapping`` with a site named
after the ATen function, because ATen's arithmetic wraps like C (dilation 2^62 makes
``dilation * (kernel - 1) + 1`` negative and the call is accepted): the oracle must
reproduce torch's answer, wraps included, not the exact one.

Sources (pytorch/pytorch at 2.13): ``aten/src/ATen/native/Convolution.cpp``
(``check_shape_forward``, ``_select_conv_backend``, ``calc_output_size``),
``ConvUtils.h`` (``conv_output_size``, ``conv_input_size``), ``ParamUtils.h``
(``expand_param_if_needed``), ``c10/core/TensorImpl.cpp`` (numel and stride overflow).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from convcheck.case import DTYPE_SIZES, TensorSpec
from convcheck.fixedint import INT64_MAX, INT64_MIN, UINT64_MAX, Wrapping
from convcheck.frozen import frozen

# c10::SymInt cannot hold an int below this: such a size in a view fails with
# "IntArrayRef contains an int that cannot be represented as a SymInt".
SYMINT_MIN = -(2**62)


class TorchError(Exception):
    """What torch raises: the Python exception type's name and its message."""

    def __init__(self, message: str, error: str = "RuntimeError") -> None:
        super().__init__(message)
        self.message = message
        self.error = error


class AtenWrapping(Wrapping):
    """``Wrapping`` for the check path, which reads only the results (and the solver,
    which runs the same functions over its own arithmetic, never sees this one): no
    trace is kept, and an int64 sum or product that fits, nearly every one, is
    returned at once. Every wrap, division and narrowing is still ``Wrapping``'s."""

    def _op(self, site: str, text: str, result: int, flag: str = "") -> int:
        return result

    def add_i64(self, a: int, b: int, site: str) -> int:
        r = a + b
        return r if INT64_MIN <= r <= INT64_MAX else super().add_i64(a, b, site)

    def sub_i64(self, a: int, b: int, site: str) -> int:
        r = a - b
        return r if INT64_MIN <= r <= INT64_MAX else super().sub_i64(a, b, site)

    def mul_i64(self, a: int, b: int, site: str) -> int:
        r = a * b
        return r if INT64_MIN <= r <= INT64_MAX else super().mul_i64(a, b, site)

    # A positive divisor, nearly every one: neither division by zero nor INT64_MIN / -1,
    # so C's quotient (rounded toward zero) and remainder at once.
    def div_i64(self, a: int, b: int, site: str) -> int:
        if b > 0:
            return a // b if a >= 0 else -(-a // b)
        return super().div_i64(a, b, site)

    def rem_i64(self, a: int, b: int, site: str) -> int:
        if b > 0:
            return a % b if a >= 0 else -(-a % b)
        return super().rem_i64(a, b, site)


def fmt_sizes(sizes: Sequence[int]) -> str:
    """``IntArrayRef``'s ``operator<<``: ``[1, 2, 3]``."""
    return "[" + ", ".join(str(s) for s in sizes) + "]"


def fmt_x(values: Sequence[int]) -> str:
    """The ``a x b`` lists of the shape checks' messages."""
    return " x ".join(str(v) for v in values)


@frozen
class Params:
    """``ConvParams`` after ``expand_param_if_needed``: one value per spatial dim."""

    stride: tuple[int, ...]
    padding: tuple[int, ...]
    dilation: tuple[int, ...]
    transposed: bool
    output_padding: tuple[int, ...]
    groups: int

    def is_strided(self) -> bool:
        return any(s != 1 for s in self.stride)

    def is_dilated(self) -> bool:
        return any(d != 1 for d in self.dilation)

    def is_output_padding_big(self) -> bool:
        # torch 2.13 compares with the stride only (not the dilation).
        return any(op >= s for op, s in zip(self.output_padding, self.stride, strict=True))

    def view1d_as_2d(self) -> Params:
        return Params(
            (1, *self.stride),
            (0, *self.padding),
            (1, *self.dilation),
            self.transposed,
            (0, *self.output_padding),
            self.groups,
        )


def expand_param(values: Sequence[int], name: str, dim: int) -> tuple[int, ...]:
    """``expand_param_if_needed``: one value broadcasts, otherwise exactly ``dim``."""
    if len(values) == 1:
        return (values[0],) * dim
    if len(values) != dim:
        raise TorchError(
            f"expected {name} to be a single integer value or a list of {dim} values to "
            f"match the convolution dimensions, but got {name}={fmt_sizes(values)}"
        )
    return tuple(values)


def expand_params(case, dim: int) -> Params:
    """The four lists in ATen's order: stride, padding, dilation, output_padding."""
    return Params(
        expand_param(case.stride, "stride", dim),
        expand_param(case.padding, "padding", dim),
        expand_param(case.dilation, "dilation", dim),
        case.transposed,
        expand_param(case.output_padding, "output_padding", dim),
        case.groups,
    )


def div_rtn(a: Wrapping, x: int, y: int, site: str) -> int:
    """``at::native::div_rtn<int64_t>`` (``ATen/div_rtn.h``): floor division, except that
    its quotient and remainder are ``int`` locals: both are cut to 32 bits, and the
    32-bit quotient is returned. (A quotient of 0 with a remainder in [2^31, 2^32) comes
    back as -1.)
    """
    q = a.narrow_i32(a.div_i64(x, y, site), site)
    r = a.narrow_i32(a.rem_i64(x, y, site), site)
    if r != 0 and (r < 0) != (y < 0):
        q = a.sub_i32(q, 1, site)
    return q


def kernel_extent(a: Wrapping, dilation: int, kernel: int, site: str) -> int:
    """``dilation * (kernel - 1) + 1`` in int64."""
    return a.add_i64(a.mul_i64(dilation, a.sub_i64(kernel, 1, site), site), 1, site)


def conv_output_size(
    a: Wrapping, in_sizes: Sequence[int], w_sizes: Sequence[int], p: Params
) -> list[int]:
    """``conv_output_size``: int64 arithmetic, C division."""
    out = [in_sizes[0], w_sizes[0]]
    for i in range(2, len(in_sizes)):
        site = f"aten.conv_output_size.dim{i - 2}"
        num = a.sub_i64(
            a.add_i64(in_sizes[i], a.mul_i64(2, p.padding[i - 2], site), site),
            kernel_extent(a, p.dilation[i - 2], w_sizes[i], site),
            site,
        )
        out.append(a.add_i64(a.div_i64(num, p.stride[i - 2], site), 1, site))
    return out


def conv_input_size(
    a: Wrapping, in_sizes: Sequence[int], w_sizes: Sequence[int], p: Params
) -> list[int]:
    """``conv_input_size``: a transposed convolution's output sizes."""
    out = [in_sizes[0], a.mul_i64(w_sizes[1], p.groups, "aten.conv_input_size.channels")]
    for i in range(2, len(in_sizes)):
        site = f"aten.conv_input_size.dim{i - 2}"
        kernel = a.mul_i64(a.sub_i64(w_sizes[i], 1, site), p.dilation[i - 2], site)
        size = a.mul_i64(a.sub_i64(in_sizes[i], 1, site), p.stride[i - 2], site)
        size = a.sub_i64(size, a.mul_i64(p.padding[i - 2], 2, site), site)
        size = a.add_i64(size, kernel, site)
        size = a.add_i64(size, p.output_padding[i - 2], site)
        out.append(a.add_i64(size, 1, site))
    return out


def calc_output_size(
    a: Wrapping, in_sizes: Sequence[int], w_sizes: Sequence[int], p: Params
) -> list[int]:
    """``calc_output_size`` (the Empty backend's view): an empty channel dim stays empty."""
    out = (
        conv_input_size(a, in_sizes, w_sizes, p)
        if p.transposed
        else conv_output_size(a, in_sizes, w_sizes, p)
    )
    if in_sizes[1] == 0:
        out[1] = 0
    return out


def _mul_u64_overflows(x: int, y: int) -> tuple[int, bool]:
    product = x * y
    return product & UINT64_MAX, product > UINT64_MAX


def storage_problem(sizes: Sequence[int], dtype: str) -> str | None:
    """Why ``torch.empty(sizes)`` cannot even be created, or None.

    ``computeStorageNbytesContiguous`` (``safe_multiply_u64`` over the sizes, sticky
    overflow, then times the item size, at most INT64_MAX) and
    ``empty_tensor_restride`` (contiguous strides, with ``max(size, 1)``).
    """
    if sizes_fit(sizes, DTYPE_SIZES[dtype]):
        return None  # every partial product and stride is at most the whole
    size, overflowed = 1, False
    for s in sizes:
        size, o = _mul_u64_overflows(size, s)
        overflowed |= o
    size, o = _mul_u64_overflows(size, DTYPE_SIZES[dtype])
    overflowed |= o or size > INT64_MAX
    if overflowed:
        return f"Storage size calculation overflowed with sizes={fmt_sizes(sizes)}"
    stride = 1
    for s in reversed(sizes[1:]):
        stride *= max(s, 1)
        if stride > INT64_MAX:
            return "Stride calculation overflowed"
    return None


def numel_problem(sizes: Sequence[int]) -> str | None:
    """``safe_compute_numel`` of a view's sizes (in their order): sticky u64 overflow."""
    if sizes_fit(sizes, 1):
        return None
    n, overflowed = 1, False
    for s in sizes:
        n, o = _mul_u64_overflows(n, s)
        overflowed |= o
    if overflowed or n > INT64_MAX:
        return "numel: integer multiplication overflow"
    return None


def sizes_fit(sizes: Sequence[int], item: int) -> bool:
    """Whether every size is positive and their product times ``item`` fits in int64:
    then no partial product can overflow (the common case, decided in one product)."""
    return min(sizes, default=1) > 0 and math.prod(sizes) * item <= INT64_MAX


def physical_sizes(spec: TensorSpec) -> list[int]:
    """The sizes of the contiguous buffer a tensor with this dim order is a view of."""
    return [spec.sizes[d] for d in spec.order]


def check_output_allocatable(sizes: Sequence[int], dtype: str) -> None:
    """What ``at::empty(sizes)`` checks before any memory is asked for."""
    for s in sizes:
        if s < SYMINT_MIN:
            raise TorchError(
                f"IntArrayRef contains an int that cannot be represented as a SymInt: {s}"
            )
    for s in sizes:
        if s < 0:
            raise TorchError(
                f"Trying to create tensor with negative dimension {s}: {fmt_sizes(sizes)}"
            )
    problem = storage_problem(sizes, dtype)
    if problem is not None:
        raise TorchError(problem)
