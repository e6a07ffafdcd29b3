"""The steps of ``current`` both pooling kernels run: ATen's checks (``pool2d_shape_check``,
``pooling_output_shape``), each bound checked before the arithmetic it protects, and the
sizes the 32-bit size type cannot hold refused."""

from __future__ import annotations

from collections.abc import Sequence

from convcheck.case import TensorSpec
from convcheck.fixedint import INT32_MAX, Arith
from convcheck.ops.convolution.current import output_fits
from convcheck.ops.pooling.checks import (
    Call,
    ceil_mode_last_window,
    input_shape,
    output_size_valid,
    resize_indices,
    resize_out,
    window,
)
from convcheck.steps import Reject


def bounded_array(
    name: str, values: tuple[int, ...], lengths: tuple[int, ...], minimum: int
) -> None:
    """ATen's lengths; elements in [minimum, INT32_MAX]: every sum and product below of
    two of them, or of one and a size, then fits int64."""
    if len(values) not in lengths:
        raise Reject(f"{name}.length")
    if any(v < minimum or v > INT32_MAX for v in values):
        raise Reject(f"{name}.range")


def lengths_and_ranges(call: Call, a: Arith) -> None:
    bounded_array("kernel_size", call.kernel_size, (1, 2), 1)
    bounded_array("stride", call.stride, (0, 1, 2), 1)
    bounded_array("padding", call.padding, (1, 2), 0)


def dilation(call: Call, a: Arith) -> None:
    bounded_array("dilation", call.dilation, (1, 2), 1)


def padding_half_kernel(call: Call, a: Arith) -> None:
    """ATen's ``pool2d_shape_check``: padding at most half the (undilated) kernel, which
    is also at most half the dilated one."""
    for i in range(2):
        k, _, p, _ = window(call, i)
        if p > a.div_i64(k, 2, f"padding.dim{i}.half_kernel"):
            raise Reject("padding.gt_half_kernel")


def output_sizes(call: Call, a: Arith) -> None:
    """ATen's ``pooling_output_shape`` for each spatial dim, in range by the bounds above."""
    sizes = list(call.input.sizes[:-2])
    for i in range(2):
        k, s, p, d = window(call, i)
        n = call.input.sizes[-2 + i]
        sizes.append(output_size(a, f"output_sizes.dim{i}", n, k, p, s, d, call.ceil_mode))
    call.out_sizes = sizes


def output_size(a: Arith, site: str, n: int, k: int, p: int, s: int, d: int, ceil: bool) -> int:
    """ATen's ``pooling_output_shape`` in int64 (below 1 where no window fits); the
    arguments in the order of legacy's ``output_size``."""
    padded = a.add_i64(n, a.mul_i64(2, p, f"{site}.two_pad"), f"{site}.padded")
    span = a.mul_i64(d, a.sub_i64(k, 1, f"{site}.k_minus_1"), f"{site}.dilated")
    numerator = a.sub_i64(a.sub_i64(padded, span, f"{site}.minus_dil"), 1, f"{site}.minus_1")
    if ceil:
        numerator = a.add_i64(numerator, a.sub_i64(s, 1, f"{site}.s_minus_1"), f"{site}.ceil")
    # ``div_rtn``: rounded toward negative infinity, as ATen does.
    quotient = a.div_i64(numerator, s, f"{site}.div_stride")
    if a.mul_i64(quotient, s, f"{site}.times_s") != numerator and numerator < 0:
        quotient = a.sub_i64(quotient, 1, f"{site}.floor")
    size = a.add_i64(quotient, 1, f"{site}.plus_1")
    return ceil_mode_last_window(a, site, size, n, p, s) if ceil else size


def _strides_fit(tensor: TensorSpec, sizes: Sequence[int], a: Arith, site: str) -> bool:
    """Whether the int32 strides the library computes for ``sizes`` in ``tensor``'s order
    fit (a size of 0 counts as 1), computed in int64 (each factor below 2^31, and the
    product checked before it grows past 2^62)."""
    order = tensor.order
    stride = 1
    for i in range(len(order) - 1, 0, -1):
        stride = a.mul_i64(stride, max(sizes[order[i]], 1), f"{site}.dim{order[i]}_checked")
        if stride > INT32_MAX:
            return False
    return True


def _resize_fits(tensor: TensorSpec, sizes: Sequence[int], a: Arith, name: str, shown: str) -> None:
    """The resize's int32 strides, checked before it computes them (for a tensor of
    the right rank: the resize refuses any other)."""
    if tensor.rank != len(sizes):
        raise Reject(f"{name}.resize")
    if not _strides_fit(tensor, sizes, a, f"{name}_strides"):
        raise Reject(f"{shown}.stride_too_large")


def out_strides(call: Call, a: Arith) -> None:
    _resize_fits(call.out, call.out_sizes, a, "out", "output")
    resize_out(call, a)


def indices_strides(call: Call, a: Arith) -> None:
    assert call.indices is not None
    _resize_fits(call.indices, call.out_sizes, a, "indices", "indices")
    resize_indices(call, a)


def input_strides_fit(call: Call, a: Arith) -> None:
    """The loops' int32 input strides, checked before the loops compute them."""
    if not _strides_fit(call.input, call.input.sizes, a, "strides_fit.input"):
        raise Reject("input.stride_too_large")


# From the input's shape to out's resize, both kernels run the same steps.
OUTPUT_SIZE_STEPS = (
    input_shape,
    padding_half_kernel,
    output_sizes,
    output_size_valid,
    output_fits,
    out_strides,
)

CHECKS = {
    "lengths_and_ranges": tuple(
        f"{name}.{check}"
        for name in ("kernel_size", "stride", "padding")
        for check in ("length", "range")
    ),
    "dilation": ("dilation.length", "dilation.range"),
    "padding_half_kernel": ("padding.gt_half_kernel",),
    "output_fits": ("output.too_large",),
    "out_strides": ("out.resize", "output.stride_too_large"),
    "indices_strides": ("indices.resize", "indices.stride_too_large"),
    "input_strides_fit": ("input.stride_too_large",),
}
