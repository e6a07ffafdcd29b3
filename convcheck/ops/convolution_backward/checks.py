"""``convolution_backward``'s own steps, around convolution's checks, which it calls
(``check_convolution_args``, ``get_convolution_out_target_size``): the call is a
convolution's call (``Call`` derives from convolution's), so convolution's steps run on
it as they are. Read beside ExecuTorch's ``op_convolution_backward.cpp`` at cff6f4dd32."""

from __future__ import annotations

import convcheck.ops.convolution.checks as conv
from convcheck.case import TensorSpec
from convcheck.fixedint import Arith
from convcheck.ops.convolution.case import ConvolutionCase
from convcheck.ops.convolution_backward.case import ConvolutionBackwardCase
from convcheck.steps import Reject

FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")
GRADS = ("grad_input", "grad_weight", "grad_bias")


class Call(conv.Call):
    """Convolution's call of ``check_convolution_args(input, weight, no bias, ...,
    out=grad_output)``, and the backward's own arguments beside it."""

    def __init__(self, case: ConvolutionBackwardCase) -> None:
        super().__init__(
            ConvolutionCase(
                case.input,
                case.weight,
                None,
                case.grad_output,
                case.stride,
                case.padding,
                case.dilation,
                case.transposed,
                case.output_padding,
                case.groups,
            )
        )
        self.backward = case
        # output_mask[i] as the kernel reads it (set by the step that reads them)
        self.mask = [False, False, False]
        # grad_bias's sizes once resized (set by the resize)
        self.grad_bias_sizes: tuple[int, ...] = case.grad_bias.sizes


def own_args(call: Call, a: Arith) -> None:
    if call.backward.transposed:
        raise Reject("transposed.unsupported")
    if call.weight.rank != 4:
        raise Reject("rank.weight")
    if call.weight.dtype != call.input.dtype or call.out.dtype != call.input.dtype:
        raise Reject("dtype.mismatch")


def grad_dtypes(call: Call, a: Arith) -> None:
    """Each requested gradient in input's dtype."""
    for i, name in enumerate(GRADS):
        if call.mask[i] and getattr(call.backward, name).dtype != call.input.dtype:
            raise Reject(f"dtype.{name}")


def grad_output_shape(call: Call, a: Arith) -> None:
    if call.out.rank != call.input.rank:
        raise Reject("grad_output.rank")
    if list(call.out.sizes) != call.out_sizes:
        raise Reject("grad_output.sizes")


def resize_grad(call: Call, a: Arith, name: str, sizes: tuple[int, ...]) -> None:
    """``resize_tensor``: the rank cannot change, sizes are non-negative, the numel fits
    ssize_t, then the strides in int32 (convolution's arithmetic)."""
    t: TensorSpec = getattr(call.backward, name)
    if t.rank != len(sizes) or any(s < 0 for s in sizes):
        raise Reject(f"{name}.resize")
    conv.numel_fits(sizes, a, f"resize.{name}", f"{name}.resize")
    conv.int32_strides(sizes, t.order, a, f"resize.{name}.strides")


def dtype_switch(call: Call, a: Arith) -> None:
    if call.input.dtype not in FLOAT_DTYPES:
        raise Reject("dtype.unsupported")


def grad_bias_writes(call: Call, a: Arith) -> None:
    """The loops add into ``grad_bias[oc]`` for every output channel, once the batch and
    the output positions are non-empty: past its end where grad_bias is shorter
    (op_convolution_backward.cpp:191)."""
    if not call.mask[2] or call.input.sizes[0] == 0 or 0 in call.out.sizes[2:]:
        return
    channels = call.weight.sizes[0]
    per_group = a.div_i64(channels, call.groups, "loops.per_group")
    length = TensorSpec(call.grad_bias_sizes).numel
    if per_group > 0 and length < channels:
        a.out_of_bounds_read("loops.grad_bias", length, channels)
