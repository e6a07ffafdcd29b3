"""``legacy``: ExecuTorch's portable ``convolution.out`` as of its main of August 2026.

Read beside ``kernels/portable/cpu/util/kernel_ops_util.cpp`` (``check_convolution_args``,
``get_convolution_out_target_size``, ``_kernel_output_size_helper``) and
``kernels/portable/cpu/op_convolution.cpp`` (``convolution_out``). Bugs included: that is
the point of this revision.
"""

from __future__ import annotations

from convcheck.fixedint import Arith
from convcheck.ops.convolution import checks
from convcheck.ops.convolution.checks import (
    Call,
    Reject,
    is_channels_last,
    is_contiguous,
    is_default_or_channels_last,
    param_steps,
    val_at,
)

# -- check_convolution_args -----------------------------------------------------------


def dtypes(call: Call, a: Arith) -> None:
    """The bias dtype is never compared: a bool bias gets through."""
    if not (call.input.dtype == call.weight.dtype == call.out.dtype):
        raise Reject("dtype.mismatch")


def dim_orders(call: Call, a: Arith) -> None:
    if not is_default_or_channels_last(call.input):
        raise Reject("dim_order.input")
    # A transposed weight is indexed through its strides, so any order is allowed.
    if not call.transposed and not is_default_or_channels_last(call.weight):
        raise Reject("dim_order.weight")
    if not is_default_or_channels_last(call.out):
        raise Reject("dim_order.out")


def ranks(call: Call, a: Arith) -> None:
    """1-D and 2-D convolutions only: a 5-D input is refused here."""
    if call.input.rank not in (3, 4):
        raise Reject("rank.input")
    if call.weight.rank != call.input.rank:
        raise Reject("rank.weight")
    if call.out.rank != call.input.rank:
        raise Reject("rank.out")


def bias_shape(call: Call, a: Arith) -> None:
    """``b.size(0) == transposed ? groups * w.size(1) : w.size(0)``, as C parses it.

    ``==`` binds tighter than ``?:``, so the comparison picks a branch and the branch's
    value is the condition. ``groups`` has not been validated yet.
    """
    bias = call.bias
    if bias is None:
        return
    if bias.rank != 1:
        raise Reject("bias.rank")
    w0, w1 = call.weight.sizes[0], call.weight.sizes[1]
    compares_equal = bias.sizes[0] == int(call.transposed)
    if compares_equal:
        condition = a.mul_i64(call.groups, w1, "bias_shape.groups_mul")
    else:
        condition = w0
    if condition == 0:
        # The failure message prints the expected length, multiplying once more.
        if call.transposed:
            a.mul_i64(call.groups, w1, "bias_shape.message_groups_mul")
        raise Reject("bias.length")


# No upper bound: nothing keeps ``2 * padding`` or ``dilation * (kernel - 1)`` from
# overflowing in the output size.
stride, padding, dilation, output_padding = param_steps(maximum=None)


def groups(call: Call, a: Arith) -> None:
    """No ``groups >= 1`` check: 0 reaches the ``%`` and negative values pass."""
    w0 = call.weight.sizes[0]
    if w0 < call.groups:
        raise Reject("groups.gt_weight0")
    if a.rem_i64(w0, call.groups, "groups.weight0_rem") != 0:
        raise Reject("groups.not_div_weight0")


# -- convolution_out, after the argument checks ---------------------------------------


def same_dim_order(call: Call, a: Arith) -> None:
    both_contiguous = is_contiguous(call.input) and is_contiguous(call.out)
    both_channels_last = is_channels_last(call.input) and is_channels_last(call.out)
    if not (both_contiguous or both_channels_last):
        raise Reject("dim_order.in_out")


def output_sizes(call: Call, a: Arith) -> None:
    """``get_convolution_out_target_size``: int64 sizes stored into int32."""
    case, w = call.case, call.weight
    sizes = [call.input.sizes[0]]
    if call.input.sizes[1] == 0:
        channels_out = 0
    elif call.transposed:
        channels_out = a.mul_i64(call.groups, w.sizes[1], "output_sizes.groups_mul")
    else:
        channels_out = w.sizes[0]
    sizes.append(a.narrow_i32(channels_out, "output_sizes.channels_narrow"))
    for i in range(call.ndim):
        kernel = w.sizes[2 + i]
        size = kernel_output_size(
            a,
            f"output_sizes.dim{i}",
            input_size=call.input.sizes[2 + i],
            kernel=kernel,
            pad=val_at(case.padding, i, 0),
            stride=val_at(case.stride, i, kernel),
            dilation=val_at(case.dilation, i, 1),
            transposed=call.transposed,
            output_padding=val_at(case.output_padding, i, 0) if call.transposed else 0,
        )
        sizes.append(a.narrow_i32(size, f"output_sizes.dim{i}.narrow"))
    call.out_sizes = sizes


def kernel_output_size(
    a: Arith,
    site: str,
    *,
    input_size: int,
    kernel: int,
    pad: int,
    stride: int,
    dilation: int,
    transposed: bool,
    output_padding: int,
) -> int:
    """``_kernel_output_size_helper``: the input size is a ``size_t`` parameter.

    Every ``+``/``-`` with it is unsigned (wraps, defined) and the int64 operands are
    converted; ``2 * pad`` and ``dilation * (kernel - 1)`` are int64 multiplies (UB on
    overflow); the unsigned sum is converted back to int64. The regular size divides in
    int64, truncating toward zero, so a kernel too large by less than the stride gives 1.
    """
    n = input_size  # size_t
    two_pad = a.mul_i64(2, pad, f"{site}.two_pad")
    kernel_minus_1 = a.sub_i64(kernel, 1, f"{site}.kernel_minus_1")
    dilated = a.mul_i64(dilation, kernel_minus_1, f"{site}.dilated_kernel")
    if transposed:
        t = a.sub_u64(n, 1, f"{site}.in_minus_1")
        t = a.mul_u64(t, a.i64_to_u64(stride, f"{site}.stride_u"), f"{site}.times_stride")
        t = a.sub_u64(t, a.i64_to_u64(two_pad, f"{site}.two_pad_u"), f"{site}.minus_two_pad")
        t = a.add_u64(t, a.i64_to_u64(dilated, f"{site}.dilated_u"), f"{site}.plus_dilated")
        t = a.add_u64(t, a.i64_to_u64(output_padding, f"{site}.op_u"), f"{site}.plus_op")
        t = a.add_u64(t, 1, f"{site}.plus_1")
        return a.u64_to_i64(t, f"{site}.result")
    t = a.add_u64(n, a.i64_to_u64(two_pad, f"{site}.two_pad_u"), f"{site}.plus_two_pad")
    t = a.sub_u64(t, a.i64_to_u64(dilated, f"{site}.dilated_u"), f"{site}.minus_dilated")
    t = a.sub_u64(t, 1, f"{site}.minus_1")
    numerator = a.u64_to_i64(t, f"{site}.numerator")
    quotient = a.div_i64(numerator, stride, f"{site}.div_stride")
    return a.add_i64(quotient, 1, f"{site}.plus_1")


def bias_load_fn(call: Call, a: Arith) -> None:
    """No load function exists for a non-real bias dtype; the loops call it anyway."""
    if call.bias is not None and call.bias.dtype == "bool":
        a.call_null("bias_load_fn.call")


# The check ids each step rejects with, in the order it checks them (docs/checks.md).
CHECKS = {
    "dtypes": ("dtype.mismatch",),
    "dim_orders": ("dim_order.input", "dim_order.weight", "dim_order.out"),
    "ranks": ("rank.input", "rank.weight", "rank.out"),
    "bias_shape": ("bias.rank", "bias.length"),
    "stride": ("stride.length", "stride.range"),
    "padding": ("padding.length", "padding.range"),
    "dilation": ("dilation.length", "dilation.range"),
    "output_padding": (
        "output_padding.length",
        "output_padding.range",
        "output_padding.too_large",
    ),
    "groups": ("groups.gt_weight0", "groups.not_div_weight0"),
    "channels": ("input.channels",),
    "same_dim_order": ("dim_order.in_out",),
    "output_size_valid": ("output.invalid",),
    "resize_out": ("out.resize",),
    "dtype_switch": ("dtype.unsupported",),
}

STEPS = (
    dtypes,
    dim_orders,
    ranks,
    bias_shape,
    stride,
    padding,
    dilation,
    output_padding,
    groups,
    checks.channels,
    same_dim_order,
    output_sizes,
    checks.output_size_valid,
    checks.resize_out,
    checks.out_strides,
    checks.empty_out,
    checks.dtype_switch,
    checks.wrapper_strides,
    bias_load_fn,
    checks.bias_reads,
)
LOOP_STEPS = frozenset({"wrapper_strides", "bias_load_fn", "bias_reads"})
