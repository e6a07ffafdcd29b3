"""A case as the program that makes ExecuTorch call ``aten::convolution.out`` with it.

The values are laid out as ``to_executorch`` lays out ``aten.convolution.default(x, w, b,
stride, padding, dilation, transposed, output_padding, groups)`` with x, w and b user
inputs: the input tensors, out, then the other arguments in order (a missing bias is a
``Null`` value, right after out), each parameter list as its ``Int`` values followed by
the ``IntList`` that names them; the call's arguments are ``[x, w, b, stride, padding,
dilation, transposed, output_padding, groups, out, out]``.

Three forms (see ``_plan.py``):

* ``whole``: every tensor memory-planned, in this order: input, weight, out, bias, then,
  right after the bias's last byte, a *canary* tensor (an extra input the call never
  names) covering the out channels the bias lacks. The out tensor is ``DYNAMIC_BOUND``
  with the plan's capacity.
* ``probe``: input, weight and bias have no memory and are not inputs; out is
  ``DYNAMIC_BOUND`` with capacity 0. The kernel runs its checks and stops at its resize.
* ``probe-static``: as ``probe`` with a ``STATIC`` out of sizes 0, whose failed resize
  logs the sizes the kernel computed.
"""

from __future__ import annotations

from convcheck.case import DTYPE_SIZES, TensorSpec
from convcheck.executorch_wheel.flatbuffer import (
    DYNAMIC_BOUND,
    STATIC,
    Layout,
    TensorValue,
    Values,
    encode,
)
from convcheck.executorch_wheel.runtime import PROBE, WHOLE
from convcheck.ops.convolution.case import ConvolutionCase
from convcheck.ops.convolution.executorch_target._plan import ALIGNMENT, Plan, aligned, nbytes

OPERATOR = ("aten::convolution", "out")


def _value(spec: TensorSpec, sizes=None, dynamism=STATIC, offset=None) -> TensorValue:
    return TensorValue(
        spec.dtype, spec.sizes if sizes is None else sizes, spec.order, dynamism, offset
    )


def layout(case: ConvolutionCase, plan: Plan, form: str) -> tuple[Layout, tuple[str, ...]]:
    """The program's layout, and the roles of its inputs in order ("input", "weight",
    "bias", "canary")."""
    if form == WHOLE:
        at = 0
        offsets = {}
        for role, spec in (("input", case.input), ("weight", case.weight)):
            offsets[role] = at
            at += aligned(nbytes(spec))
        out_bytes = DTYPE_SIZES[case.out.dtype]
        for s in plan.capacity:
            out_bytes *= s
        offsets["out"] = at
        at += aligned(out_bytes)
        x = _value(case.input, offset=offsets["input"])
        w = _value(case.weight, offset=offsets["weight"])
        out = _value(case.out, plan.capacity, DYNAMIC_BOUND, offsets["out"])
        b = canary = None
        if case.bias is not None:
            b = _value(case.bias, offset=at)
            at += nbytes(case.bias)
            if plan.canary:
                canary = TensorValue(case.bias.dtype, (plan.canary,), (0,), STATIC, at)
                at += plan.canary * DTYPE_SIZES[case.bias.dtype]
        planned = max(aligned(at), ALIGNMENT)
    else:
        dynamism = DYNAMIC_BOUND if form == PROBE else STATIC
        x, w = _value(case.input), _value(case.weight)
        b = None if case.bias is None else _value(case.bias)
        out = _value(case.out, (0,) * case.out.rank, dynamism, 0)
        canary = None
        planned = ALIGNMENT
    # As exir numbers them: the inputs, out, then the arguments (a Null bias among them).
    values = Values([x, w, b, out] if b is not None else [x, w, out, None])
    bias, out_index = (2, 3) if b is not None else (3, 2)
    stride = values.int_list(case.stride)
    padding = values.int_list(case.padding)
    dilation = values.int_list(case.dilation)
    transposed = values.add(("bool", case.transposed))
    output_padding = values.int_list(case.output_padding)
    groups = values.add(("int", case.groups))
    args: tuple[int, ...] = (
        0,
        1,
        bias,
        stride,
        padding,
        dilation,
        transposed,
        output_padding,
        groups,
    )
    args += (out_index, out_index)

    roles: tuple[str, ...] = ()
    inputs: tuple[int, ...] = ()
    if form == WHOLE:
        roles, inputs = ("input", "weight"), (0, 1)
        if b is not None:
            roles, inputs = roles + ("bias",), inputs + (2,)
        if canary is not None:
            roles, inputs = roles + ("canary",), inputs + (values.add(canary),)
    return Layout(tuple(values), inputs, (out_index,), args, planned, OPERATOR), roles


def program(case: ConvolutionCase, plan: Plan, form: str) -> tuple[bytes, tuple[str, ...]]:
    """The ``.pte`` bytes for ``case`` in ``form``, and the roles of its inputs."""
    lay, roles = layout(case, plan, form)
    return encode(lay), roles
