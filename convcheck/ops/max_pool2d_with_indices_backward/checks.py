"""``max_pool2d_with_indices_backward``'s steps: ``legacy`` is ExecuTorch's kernel at
cff6f4dd32 (``op_max_pool2d_with_indices_backward.cpp``, ``check_max_pool2d_with_indices_args``
and ``_kernel_output_size_helper`` in ``kernel_ops_util.cpp``), ``current`` the fix.

The pooling checks it calls validate ``kernel_size`` where ``stride`` and ``dilation``
were meant, so neither is checked; ``indices`` is checked for its dtype only, and its
values nowhere: the loops read ``grad_output``'s element count of indices and add into
``grad_input`` wherever an index points.
"""

from __future__ import annotations

from convcheck.case import TensorSpec
from convcheck.fixedint import Arith
from convcheck.ops.convolution.checks import check_layouts, numel_fits, val_at
from convcheck.ops.max_pool2d_with_indices_backward.case import MaxPoolBackwardCase
from convcheck.ops.pooling.legacy import output_size
from convcheck.steps import Reject

FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")


class Call:
    """The arguments as the C sees them. ``out`` is ``grad_input`` and ``out_sizes`` the
    sizes it is resized to (the input's), so convolution's resize steps read it."""

    def __init__(self, case: MaxPoolBackwardCase) -> None:
        self.case = case
        self.input: TensorSpec = case.input
        self.grad_output: TensorSpec = case.grad_output
        self.indices: TensorSpec = case.indices
        self.out: TensorSpec = case.grad_input
        self.pool_sizes: list[int] = []
        self.out_sizes: list[int] = []


def dtypes(call: Call, a: Arith) -> None:
    if call.grad_output.dtype != call.input.dtype or call.out.dtype != call.input.dtype:
        raise Reject("dtype.mismatch")
    if call.indices.dtype != "int64":
        raise Reject("indices.dtype")


def dim_orders(call: Call, a: Arith) -> None:
    check_layouts(input=call.input, grad_output=call.grad_output)


def check_list(
    name: str, values: tuple[int, ...], minimum: int, maximum: int | None, empty: bool
) -> None:
    """``param_array_is_valid`` for 2 dims: length 1 or 2 (or 0 where allowed), every
    element at least ``minimum`` (and, in current, at most ``maximum``)."""
    if len(values) not in ((0, 1, 2) if empty else (1, 2)):
        raise Reject(f"{name}.length")
    for v in values:
        if v < minimum or (maximum is not None and v > maximum):
            raise Reject(f"{name}.range")


def padding_half_kernel(call: Call) -> None:
    kernel = call.case.kernel_size
    for i, p in enumerate(call.case.padding):
        if p > val_at(kernel, i) // 2:
            raise Reject("padding.gt_half_kernel")


def pool_sizes(call: Call, a: Arith) -> None:
    """The forward output's sizes, as the forward max pool computes them
    (``_kernel_output_size_helper``), stored into the int32 size type. An empty stride
    means the kernel size; an empty dilation 1."""
    case, sizes = call.case, call.input.sizes
    out = list(sizes[:-2])
    for i in range(2):
        k = val_at(case.kernel_size, i)
        size = output_size(
            a,
            f"pool_sizes.dim{i}",
            sizes[len(sizes) - 2 + i],
            k,
            val_at(case.padding, i, 0),
            val_at(case.stride, i, k),
            val_at(case.dilation, i, 1),
            case.ceil_mode,
        )
        out.append(a.narrow_i32(size, f"pool_sizes.dim{i}.narrow"))
    call.pool_sizes = out


def pool_size_valid(call: Call, a: Arith) -> None:
    sizes = call.pool_sizes
    if any(s < 0 for s in sizes[:-2]) or any(s <= 0 for s in sizes[-2:]):
        raise Reject("output.invalid")


def grad_output_shape(call: Call, a: Arith) -> None:
    if call.grad_output.rank != call.input.rank:
        raise Reject("grad_output.rank")
    if list(call.grad_output.sizes) != call.pool_sizes:
        raise Reject("grad_output.sizes")


def resize_grad_input(call: Call, a: Arith) -> None:
    """grad_input takes the input's sizes: its rank cannot change, its numel must fit."""
    if call.out.rank != call.input.rank:
        raise Reject("grad_input.resize")
    call.out_sizes = list(call.input.sizes)
    numel_fits(call.out_sizes, a, "resize_out", "grad_input.resize")


def dtype_switch(call: Call, a: Arith) -> None:
    if call.input.dtype not in FLOAT_DTYPES:
        raise Reject("dtype.unsupported")


# -- the loops: only the run entry, with data, gets here --------------------------------


def _value_at(case: MaxPoolBackwardCase, e: int) -> int:
    if case.planted_at is not None and e == case.planted_at:
        return case.planted_value
    return case.indices_fill


def _first_bad(call: Call, planes: int, per_plane: int, plane: int, end: int) -> int | None:
    """The first flat element below ``end`` whose index points outside grad_input: in
    plane c, index v (not -1) lands at ``c * plane + v``, which must be in
    ``[0, planes * plane)``. The fill's bad planes are a run at one end (v < 0: the first
    ``ceil(-v / plane)``; v >= 0: the last ``floor(v / plane)``); the plant is one."""
    case = call.case
    found: list[int] = []
    p = case.planted_at
    if p is not None and 0 <= p < end and _bad(case.planted_value, p // per_plane, planes, plane):
        found.append(p)
    v = case.indices_fill
    if v != -1:
        if v < 0:  # bad while c * plane < -v
            first_plane, last_plane = 0, min(planes, (plane - v - 1) // plane)
        else:  # bad from c >= planes - floor(v / plane)
            first_plane, last_plane = max(0, planes - v // plane), planes
        for e in (first_plane * per_plane, first_plane * per_plane + 1):
            if e < min(end, last_plane * per_plane) and e != p:
                found.append(e)
                break
    return min(found) if found else None


def _bad(v: int, c: int, planes: int, plane: int) -> bool:
    return v != -1 and not 0 <= c * plane + v < planes * plane


def loops(call: Call, a: Arith) -> None:
    """For each plane c (batch times channels of grad_output) and each of its P pooled
    positions, element e = c * P + j: read ``indices[e]`` (past its end when indices has
    fewer elements than grad_output: a heap over-read, op_..._backward.cpp:125), then,
    unless it is -1, add into ``grad_input[c * H * W + index]`` (outside the buffer: a
    heap overflow, :128). The first of these in e's order is where a sanitizer stops."""
    go = call.grad_output.sizes
    planes = go[0] if call.grad_output.rank == 3 else a.mul_i64(go[0], go[1], "loops.planes")
    per_plane = a.mul_i64(go[-2], go[-1], "loops.per_plane")
    plane = a.mul_i64(call.input.sizes[-2], call.input.sizes[-1], "loops.plane")
    elements = a.mul_i64(planes, per_plane, "loops.elements")
    if elements == 0:
        return
    read = call.indices.numel
    bad = _first_bad(call, planes, per_plane, plane, min(read, elements))
    if bad is not None:
        numel = a.mul_i64(planes, plane, "loops.grad_input_numel")
        a.out_of_bounds_read("loops.grad_input_access", numel, bad)
    elif read < elements:
        a.out_of_bounds_read("loops.indices_read", read, elements)


# -- current's own -------------------------------------------------------------------


def indices_shape(call: Call, a: Arith) -> None:
    """One index per element of grad_output, in its layout."""
    if call.indices.sizes != call.grad_output.sizes:
        raise Reject("indices.sizes")
    if call.indices.order != call.grad_output.order:
        raise Reject("dim_order.indices")


def index_values(call: Call, a: Arith) -> None:
    """What a kernel should promise, and torch does not check: each index is -1 (no
    maximum, skipped) or a position in its own plane, ``[0, H * W)``; any other value
    is refused before anything is written. It reads the data: the run entry's only."""
    plane = a.mul_i64(call.input.sizes[-2], call.input.sizes[-1], "index_values.plane")
    for value in call.case.index_values():
        if value != -1 and not 0 <= value < plane:
            raise Reject("indices.range")
