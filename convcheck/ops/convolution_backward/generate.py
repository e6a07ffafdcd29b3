"""Calls of ``convolution_backward.out`` by construction: a 2-D convolution whose channels
match and whose kernel fits, grad_output of its exact output sizes, all three gradients
requested; then the mask's length, bias_sizes, grad_bias or a convolution argument
pushed to an edge."""

from __future__ import annotations

from convcheck.case import TensorSpec
from convcheck.fixedint import Exact
from convcheck.generate import Source, dtype, edge_int64, param_list, size
from convcheck.ops.convolution.checks import val_at
from convcheck.ops.convolution.legacy import kernel_output_size
from convcheck.ops.convolution_backward.case import ConvolutionBackwardCase


def build_case(src: Source, small: bool = False) -> ConvolutionBackwardCase:
    p_edge = 0.0 if small else 0.08
    groups = src.choice((1, 1, 1, 2)) if src.chance(0.95) else edge_int64(src)
    g = groups if 0 < groups <= 2 else 1
    per_in, per_out = src.integer(1, 2), src.integer(1, 3)
    kernel = [src.integer(1, 3) for _ in range(2)]
    spatial = [size(src, 1, 5, p_edge / 2) for _ in range(2)]
    stride = param_list(src, 2, 1, 2, p_edge)
    padding = param_list(src, 2, 0, 1, p_edge)
    dilation = param_list(src, 2, 1, 2, p_edge)
    batch = size(src, 0 if src.chance(0.1) else 1, 2, 0.0)
    weight = (g * per_out, per_in, *kernel)
    input = (batch, g * per_in, *spatial)
    out = [batch, weight[0]]
    for i in range(2):
        out.append(
            kernel_output_size(
                Exact(),
                "gen",
                input_size=spatial[i],
                kernel=kernel[i],
                pad=val_at(padding, i, 0),
                stride=val_at(stride, i, kernel[i]) or 1,
                dilation=val_at(dilation, i, 1),
                transposed=False,
                output_padding=0,
            )
        )
    out = [min(max(s, 0), 2**31 - 1) for s in out]
    mask = (
        (1, 1, 1)
        if src.chance(0.85)
        else tuple(src.integer(0, 1) for _ in range(src.integer(0, 4)))
    )
    bias_roll = src.integer(0, 9)
    bias_sizes = (weight[0],) if bias_roll < 7 else (src.integer(0, 3),) if bias_roll < 9 else ()
    grad_bias = (weight[0],) if src.chance(0.85) else (src.integer(0, 3),)
    base = "float32" if src.chance(0.9) else dtype(src)
    dtypes = [base if src.chance(0.97) else dtype(src) for _ in range(3)]
    return ConvolutionBackwardCase(
        grad_output=TensorSpec(tuple(out), base),
        input=TensorSpec(input, base),
        weight=TensorSpec(weight if src.chance(0.97) else weight[:3], base),
        bias_sizes=bias_sizes,
        bias_sizes_given=src.chance(0.7),
        stride=stride,
        padding=padding,
        dilation=dilation,
        transposed=src.chance(0.03),
        output_padding=(0,),
        groups=groups,
        output_mask=mask,
        grad_input=TensorSpec((1, 1, 1, 1), dtypes[0]),
        grad_weight=TensorSpec((1, 1, 1, 1), dtypes[1]),
        grad_bias=TensorSpec(grad_bias, dtypes[2]),
    )
