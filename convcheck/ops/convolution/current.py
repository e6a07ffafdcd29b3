"""``current``: the fixed semantics of ExecuTorch PR 24385.

Read beside the thread in ``shared/reference/pr-24385-thread.txt``: 1-D, 2-D and 3-D;
groups validated before anything multiplies by it; bias rank, length and dtype checked;
stride, padding, dilation and output_padding bounded to 32 bits so that no later step can
overflow; kernel dims at least 1; a regular convolution's dilated kernel no larger than
the padded input; empty spatial dims only with an empty batch or channel dim; output
sizes that do not fit the 32-bit size type rejected; input and out dim orders may differ.
"""

from __future__ import annotations

from collections.abc import Sequence

from convcheck.fixedint import INT32_MAX, Arith
from convcheck.ops.convolution import checks, legacy
from convcheck.ops.convolution.checks import Call, Reject, param_steps, unsqueezed, val_at
from convcheck.ops.convolution.checks import out_strides as int32_out_strides
from convcheck.ops.convolution.legacy import dim_orders, dtypes


def ranks(call: Call, a: Arith) -> None:
    if call.input.rank not in (3, 4, 5):
        raise Reject("rank.input")
    if call.weight.rank != call.input.rank:
        raise Reject("rank.weight")
    if call.out.rank != call.input.rank:
        raise Reject("rank.out")


# Bounding these to int32 keeps every later product of two of them, or of one of them and
# a size, inside int64: the output-size arithmetic cannot overflow.
stride, padding, dilation, output_padding = param_steps(maximum=INT32_MAX)


def groups(call: Call, a: Arith) -> None:
    """After this, 1 <= groups <= w.size(0) < 2^31: safe to multiply and divide by."""
    if call.groups < 1:
        raise Reject("groups.nonpos")
    legacy.groups(call, a)


def bias(call: Call, a: Arith) -> None:
    b = call.bias
    if b is None:
        return
    if b.rank != 1:
        raise Reject("bias.rank")
    # The product only where a bias is checked: on a biasless call's paths, a product of
    # two symbolic sizes made every later query of torch's rank-3 paths nonlinear
    # (``prove --against torch`` went from 79 s to 25 minutes).
    if call.transposed:
        expected = a.mul_i64(call.groups, call.weight.sizes[1], "bias.groups_mul")
    else:
        expected = call.weight.sizes[0]
    if b.sizes[0] != expected:
        raise Reject("bias.length")
    # The loops load bias through a per-dtype function that exists for real dtypes only.
    if b.dtype == "bool":
        raise Reject("bias.dtype")


def kernel(call: Call, a: Arith) -> None:
    case = call.case
    for i in range(call.ndim):
        if call.weight.sizes[2 + i] < 1:
            raise Reject("kernel.nonpos")
    if call.transposed:
        return
    for i in range(call.ndim):
        site = f"kernel.dim{i}"
        pad = val_at(case.padding, i, 0)
        padded = a.add_i64(call.input.sizes[2 + i], a.mul_i64(2, pad, f"{site}.two_pad"), site)
        kernel_minus_1 = a.sub_i64(call.weight.sizes[2 + i], 1, f"{site}.kernel_minus_1")
        span = a.mul_i64(val_at(case.dilation, i, 1), kernel_minus_1, f"{site}.dilated")
        if padded < a.add_i64(span, 1, f"{site}.span"):
            raise Reject("kernel.gt_padded_input")


def empty_spatial(call: Call, a: Arith) -> None:
    sizes = call.input.sizes
    if sizes[0] != 0 and sizes[1] != 0 and any(s == 0 for s in sizes[2:]):
        raise Reject("input.empty_spatial")


def output_sizes(call: Call, a: Arith) -> None:
    """All signed int64, in range by the bounds above; validated before any narrowing."""
    case, w = call.case, call.weight
    sizes = [call.input.sizes[0]]
    if call.input.sizes[1] == 0:
        sizes.append(0)
    elif call.transposed:
        sizes.append(a.mul_i64(call.groups, w.sizes[1], "output_sizes.groups_mul"))
    else:
        sizes.append(w.sizes[0])
    for i in range(call.ndim):
        site = f"output_sizes.dim{i}"
        n = call.input.sizes[2 + i]
        pad, dil = val_at(case.padding, i, 0), val_at(case.dilation, i, 1)
        two_pad = a.mul_i64(2, pad, f"{site}.two_pad")
        span = a.mul_i64(dil, a.sub_i64(w.sizes[2 + i], 1, f"{site}.k_minus_1"), f"{site}.dilated")
        s = val_at(case.stride, i)
        if call.transposed:
            t = a.mul_i64(a.sub_i64(n, 1, f"{site}.in_minus_1"), s, f"{site}.times_stride")
            t = a.add_i64(a.sub_i64(t, two_pad, f"{site}.minus_two_pad"), span, f"{site}.plus_dil")
            t = a.add_i64(t, val_at(case.output_padding, i, 0), f"{site}.plus_op")
            size = a.add_i64(t, 1, f"{site}.plus_1")
        else:
            t = a.sub_i64(a.add_i64(n, two_pad, f"{site}.plus_two_pad"), span, f"{site}.minus_dil")
            numerator = a.sub_i64(t, 1, f"{site}.minus_1")
            size = a.add_i64(a.div_i64(numerator, s, f"{site}.div_stride"), 1, f"{site}.plus_1")
        sizes.append(size)
    call.out_sizes = sizes


def output_fits(call: Call, a: Arith) -> None:
    """The tensor library's size type is int32; sizes were checked positive before."""
    if any(s > INT32_MAX for s in call.out_sizes):
        raise Reject("output.too_large")
    call.out_sizes = [a.narrow_i32(s, "output_fits.narrow") for s in call.out_sizes]


def int32_strides_fit(
    sizes: Sequence[int], order: tuple[int, ...], a: Arith, site: str, check: str
) -> None:
    """Rejects with ``check`` when a stride the tensor library would compute in int32 from
    these sizes passes INT32_MAX. Computed in int64 (each is a product of sizes below
    2^31, each factor at most INT32_MAX once the previous one passed)."""
    stride = 1
    for i in range(len(order) - 1, 0, -1):
        size = sizes[order[i]]
        stride = a.mul_i64(stride, max(size, 1), f"{site}.dim{order[i]}_checked")
        if stride > INT32_MAX:
            raise Reject(check)


def out_strides(call: Call, a: Arith) -> None:
    """Beyond PR 24385: out's strides must fit the int32 stride type too, and a call whose
    out would need a larger one is refused before the tensor library computes them."""
    int32_strides_fit(call.out_sizes, call.out.order, a, "out_strides", "output.stride_too_large")
    int32_out_strides(call, a)


def strides_fit(call: Call, a: Arith) -> None:
    """Beyond PR 24385 as well: the loops' set-up computes input's and weight's strides in
    int32 (``wrapper_strides``); a call that would overflow there is refused before it.
    Only a non-empty out gets here, as only then do the loops run."""
    for name, tensor in (("input", call.input), ("weight", call.weight)):
        sizes, order = unsqueezed(tensor)
        int32_strides_fit(sizes, order, a, f"strides_fit.{name}", f"{name}.stride_too_large")


# The check ids each step rejects with, in the order it checks them (docs/checks.md);
# the steps legacy shares check what legacy's do.
_AS_LEGACY = legacy.CHECKS
CHECKS = {
    **{step: _AS_LEGACY[step] for step in ("dtypes", "dim_orders", "ranks")},
    **{step: _AS_LEGACY[step] for step in ("stride", "padding", "dilation", "output_padding")},
    "groups": ("groups.nonpos", "groups.gt_weight0", "groups.not_div_weight0"),
    "bias": ("bias.rank", "bias.length", "bias.dtype"),
    "channels": _AS_LEGACY["channels"],
    "kernel": ("kernel.nonpos", "kernel.gt_padded_input"),
    "empty_spatial": ("input.empty_spatial",),
    "output_size_valid": _AS_LEGACY["output_size_valid"],
    "output_fits": ("output.too_large",),
    "resize_out": _AS_LEGACY["resize_out"],
    "out_strides": ("output.stride_too_large",),
    "dtype_switch": _AS_LEGACY["dtype_switch"],
    "strides_fit": ("input.stride_too_large", "weight.stride_too_large"),
}

STEPS = (
    dtypes,
    dim_orders,
    ranks,
    stride,
    padding,
    dilation,
    output_padding,
    groups,
    bias,
    checks.channels,
    kernel,
    empty_spatial,
    output_sizes,
    checks.output_size_valid,
    output_fits,
    checks.resize_out,
    out_strides,
    checks.empty_out,
    checks.dtype_switch,
    strides_fit,
    checks.wrapper_strides,
    checks.bias_reads,
)
LOOP_STEPS = frozenset({"wrapper_strides", "bias_reads"})
