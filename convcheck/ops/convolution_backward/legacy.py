"""``legacy``: ExecuTorch's portable ``convolution_backward.out`` at cff6f4dd32, bugs
included: it reads three entries of ``output_mask`` whatever its length
(op_convolution_backward.cpp:51-59), resizes grad_bias to ``bias_sizes`` (or leaves it as
given) and then adds into one element per output channel (:191), and it validates
through convolution's legacy checks, with their classes (``groups`` 0, unbounded padding
and dilation: kernel_ops_util.cpp:438, :211)."""

from __future__ import annotations

import convcheck.ops.convolution.legacy as conv
from convcheck.fixedint import Arith
from convcheck.ops.convolution_backward.checks import (
    GRADS,
    Call,
    dtype_switch,
    grad_bias_writes,
    grad_output_shape,
    own_args,
    resize_grad,
)
from convcheck.steps import Reject


def output_mask(call: Call, a: Arith) -> None:
    """Each entry read, then its gradient's dtype checked; an entry past the list's end
    is read all the same (an unreadable one counts as false here: the read is the bug)."""
    mask = call.backward.output_mask
    for i, name in enumerate(GRADS):
        if i >= len(mask):
            a.out_of_bounds_read("output_mask.read", len(mask), i + 1)
        call.mask[i] = i < len(mask) and mask[i] != 0
        if call.mask[i] and getattr(call.backward, name).dtype != call.input.dtype:
            raise Reject(f"dtype.{name}")


def resize_grads(call: Call, a: Arith) -> None:
    """grad_input to the input's sizes, grad_weight to the weight's, grad_bias to
    ``bias_sizes`` when given (else it keeps its own), each only where requested."""
    case = call.backward
    if call.mask[0]:
        resize_grad(call, a, "grad_input", case.input.sizes)
    if call.mask[1]:
        resize_grad(call, a, "grad_weight", case.weight.sizes)
    if case.bias_sizes_given and call.mask[2]:
        resize_grad(call, a, "grad_bias", case.bias_sizes)
        call.grad_bias_sizes = case.bias_sizes


# check_convolution_args, in convolution's steps
_CONVOLUTION_ARGS: tuple[str, ...] = (
    *("dtypes", "dim_orders", "ranks", "bias_shape", "stride", "padding"),
    *("dilation", "output_padding", "groups", "channels"),
)
_CONV_STEPS = {step.__name__: step for step in conv.STEPS}

CHECKS = {
    "own_args": ("transposed.unsupported", "rank.weight", "dtype.mismatch"),
    "output_mask": ("dtype.grad_input", "dtype.grad_weight", "dtype.grad_bias"),
    **{step: conv.CHECKS[step] for step in _CONVOLUTION_ARGS if step in conv.CHECKS},
    "output_size_valid": conv.CHECKS["output_size_valid"],
    "grad_output_shape": ("grad_output.rank", "grad_output.sizes"),
    "resize_grads": ("grad_input.resize", "grad_weight.resize", "grad_bias.resize"),
    "dtype_switch": ("dtype.unsupported",),
}

STEPS = (
    own_args,
    output_mask,
    # check_convolution_args, then get_convolution_out_target_size: convolution's own
    *(_CONV_STEPS[name] for name in (*_CONVOLUTION_ARGS, "output_sizes", "output_size_valid")),
    grad_output_shape,
    resize_grads,
    dtype_switch,
    grad_bias_writes,
)
LOOP_STEPS = frozenset({"grad_bias_writes"})
