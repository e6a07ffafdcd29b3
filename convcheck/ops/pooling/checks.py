"""What the pooling kernels' revisions share: the call as the C sees it, and the checks
both revisions run alike (``legacy``'s and ``current``'s own are in the modules of those
names). Each op's revisions put them in that op's C order (docs/checks-pooling.md).
"""

from __future__ import annotations

from convcheck.case import Case, TensorSpec
from convcheck.fixedint import Arith
from convcheck.ops.convolution.checks import check_layouts, int32_strides, numel_fits, val_at
from convcheck.steps import Reject


class Call:
    """The arguments as the C sees them. avg_pool2d has no dilation: its C passes an
    empty list, which every helper reads as 1 (``val_at``'s default)."""

    def __init__(self, case: Case) -> None:
        self.case = case
        self.input: TensorSpec = case.input  # type: ignore[attr-defined]
        self.out: TensorSpec = case.out  # type: ignore[attr-defined]
        self.indices: TensorSpec | None = getattr(case, "indices", None)
        self.kernel_size: tuple[int, ...] = case.kernel_size  # type: ignore[attr-defined]
        self.stride: tuple[int, ...] = case.stride  # type: ignore[attr-defined]
        self.padding: tuple[int, ...] = case.padding  # type: ignore[attr-defined]
        self.dilation: tuple[int, ...] = getattr(case, "dilation", ())
        self.ceil_mode: bool = case.ceil_mode  # type: ignore[attr-defined]
        self.count_include_pad: bool = getattr(case, "count_include_pad", False)
        self.out_sizes: list[int] = []


def window(call: Call, i: int) -> tuple[int, int, int, int]:
    """Spatial dim ``i``'s kernel, stride, padding and dilation, with the C's defaults
    (a missing stride is the kernel size)."""
    k = val_at(call.kernel_size, i)
    return k, val_at(call.stride, i, k), val_at(call.padding, i, 0), val_at(call.dilation, i, 1)


# -- checks both revisions run alike ---------------------------------------------------


def ceil_mode_last_window(a: Arith, site: str, size: int, n: int, p: int, s: int) -> int:
    """In ceil mode the last window must start inside the input or its left padding: one
    that would start in the right padding is dropped."""
    last = a.mul_i64(a.sub_i64(size, 1, f"{site}.size_minus_1"), s, f"{site}.last_start")
    if last >= a.add_i64(n, p, f"{site}.input_plus_pad"):
        return a.sub_i64(size, 1, f"{site}.drop_last")
    return size


def dtypes(call: Call, a: Arith) -> None:
    if call.input.dtype != call.out.dtype:
        raise Reject("dtype.mismatch")


def indices_dtype(call: Call, a: Arith) -> None:
    assert call.indices is not None
    if call.indices.dtype != "int64":
        raise Reject("indices.dtype")


def dim_orders(call: Call, a: Arith) -> None:
    check_layouts(input=call.input, out=call.out)


def input_shape(call: Call, a: Arith) -> None:
    """3-D (channels, height, width), none empty, or 4-D whose batch alone may be empty."""
    sizes = call.input.sizes
    if not (
        (len(sizes) == 3 and all(s > 0 for s in sizes))
        or (len(sizes) == 4 and all(s > 0 for s in sizes[1:]))
    ):
        raise Reject("input.shape")


def output_size_valid(call: Call, a: Arith) -> None:
    """``output_size_is_valid(sizes, 2)``: the two spatial sizes positive, the others not
    negative."""
    sizes = call.out_sizes
    if any(s < 0 for s in sizes[:-2]) or any(s <= 0 for s in sizes[-2:]):
        raise Reject("output.invalid")


def _resize(tensor: TensorSpec, sizes: list[int], a: Arith, name: str) -> None:
    """``resize_tensor``: the rank is the tensor's own, and its element count must fit
    the library's ssize_t; then it computes the new strides in its int32 stride type."""
    if tensor.rank != len(sizes):
        raise Reject(f"{name}.resize")
    numel_fits(sizes, a, f"resize_{name}", f"{name}.resize")
    int32_strides(sizes, tensor.order, a, f"{name}_strides")


def resize_out(call: Call, a: Arith) -> None:
    _resize(call.out, call.out_sizes, a, "out")


def resize_indices(call: Call, a: Arith) -> None:
    assert call.indices is not None
    _resize(call.indices, call.out_sizes, a, "indices")


def input_strides(call: Call, a: Arith) -> None:
    """The loops' set-up computes input's strides in int32 from its sizes."""
    int32_strides(call.input.sizes, call.input.order, a, "loop_strides.input")


# The check ids each shared step rejects with, in the order it checks them
# (docs/checks-pooling.md); each revision's table is read off its steps (``op.checks``).
CHECKS = {
    "dtypes": ("dtype.mismatch",),
    "indices_dtype": ("indices.dtype",),
    "dim_orders": ("dim_order.input", "dim_order.out"),
    "input_shape": ("input.shape",),
    "output_size_valid": ("output.invalid",),
    "resize_out": ("out.resize",),
    "resize_indices": ("indices.resize",),
}
