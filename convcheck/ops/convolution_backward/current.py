"""``current``: the fixed semantics. ``output_mask`` has three entries; convolution's
current checks (groups validated first, parameters bounded to 32 bits, the kernel no
larger than the padded input, sizes that fit int32); grad_bias is resized to one element
per output channel whatever ``bias_sizes`` says (torch's grad_bias has that shape and
accepts such calls), so the loops' writes stay inside it."""

from __future__ import annotations

import convcheck.ops.convolution.current as conv
from convcheck.fixedint import Arith
from convcheck.ops.convolution_backward import checks, legacy
from convcheck.ops.convolution_backward.checks import Call, resize_grad
from convcheck.steps import Reject


def output_mask(call: Call, a: Arith) -> None:
    if len(call.backward.output_mask) != 3:
        raise Reject("output_mask.length")
    legacy.output_mask(call, a)


def grads_fit(call: Call, a: Arith) -> None:
    """Each requested gradient's strides, which its resize computes in int32, must fit
    (convolution's current check of the same)."""
    case = call.backward
    for i, (name, sizes) in enumerate(
        (("grad_input", case.input.sizes), ("grad_weight", case.weight.sizes))
    ):
        if call.mask[i]:
            order = getattr(case, name).order
            conv.int32_strides_fit(sizes, order, a, f"grads_fit.{name}", f"{name}.stride_too_large")


def resize_grads(call: Call, a: Arith) -> None:
    case = call.backward
    if call.mask[0]:
        resize_grad(call, a, "grad_input", case.input.sizes)
    if call.mask[1]:
        resize_grad(call, a, "grad_weight", case.weight.sizes)
    if call.mask[2]:
        channels = (case.weight.sizes[0],)
        resize_grad(call, a, "grad_bias", channels)
        call.grad_bias_sizes = channels


_CONVOLUTION_ARGS: tuple[str, ...] = (
    *("dtypes", "dim_orders", "ranks", "stride", "padding", "dilation"),
    *("output_padding", "groups", "bias", "channels", "kernel", "empty_spatial"),
)
_OUTPUT = ("output_sizes", "output_size_valid", "output_fits")
_CONV_STEPS = {step.__name__: step for step in conv.STEPS}

CHECKS = {
    "own_args": legacy.CHECKS["own_args"],
    "output_mask": ("output_mask.length", *legacy.CHECKS["output_mask"]),
    **{step: conv.CHECKS[step] for step in (*_CONVOLUTION_ARGS, *_OUTPUT) if step in conv.CHECKS},
    **{step: legacy.CHECKS[step] for step in ("grad_output_shape",)},
    "grads_fit": ("grad_input.stride_too_large", "grad_weight.stride_too_large"),
    **{step: legacy.CHECKS[step] for step in ("resize_grads",)},
    "dtype_switch": legacy.CHECKS["dtype_switch"],
}

STEPS = (
    checks.own_args,
    output_mask,
    *(_CONV_STEPS[name] for name in (*_CONVOLUTION_ARGS, *_OUTPUT)),
    checks.grad_output_shape,
    grads_fit,
    resize_grads,
    checks.dtype_switch,
    checks.grad_bias_writes,
)
LOOP_STEPS = frozenset({"grad_bias_writes"})
