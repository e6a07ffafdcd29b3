"""Calls of ``convolution.out`` by construction: channels that match, a kernel that fits,
then an argument or two pushed to an edge (``convcheck.generate``'s draws)."""

from __future__ import annotations

from convcheck.case import TensorSpec
from convcheck.fixedint import INT32_MAX
from convcheck.generate import (
    LAYOUTS,
    Source,
    dim_order,
    dtype,
    edge_int64,
    param_list,
    size,
)
from convcheck.ops.convolution.case import ConvolutionCase


def build_case(src: Source, small: bool = False) -> ConvolutionCase:
    """A call, usually valid in most respects, with a few arguments at their edges.

    ``small`` keeps every tensor within a few thousand elements, for judges that compute.
    """
    p_edge = 0.0 if small else 0.08
    rank = src.choice((3, 4, 5)) if src.chance(0.93) else src.choice((1, 2, 6))
    ndim = max(rank - 2, 0)
    transposed = src.chance(0.35)
    groups = src.choice((1, 1, 1, 2, 3)) if src.chance(0.9) else edge_int64(src)
    group_size = max(groups, 1) if 0 < groups <= 4 else 1
    per_group_in = src.integer(0 if src.chance(0.05) else 1, 3)
    per_group_out = src.integer(0 if src.chance(0.05) else 1, 3)
    kernel = [size(src, 0 if src.chance(0.05) else 1, 3, p_edge / 2) for _ in range(ndim)]
    stride = param_list(src, ndim, 1, 3, p_edge)
    padding = param_list(src, ndim, 0, 2, p_edge)
    dilation = param_list(src, ndim, 1, 2, p_edge)
    output_padding = param_list(src, ndim, 0, 1, p_edge)
    batch = size(src, 0 if src.chance(0.05) else 1, 2, p_edge / 2)
    spatial = [
        size(src, 0 if src.chance(0.05) else 1, 6 if ndim < 3 else 4, p_edge) for _ in range(ndim)
    ]
    if transposed:
        w_sizes = [group_size * per_group_in, per_group_out, *kernel]
        in_channels, out_channels = w_sizes[0], group_size * per_group_out
    else:
        w_sizes = [group_size * per_group_out, per_group_in, *kernel]
        in_channels, out_channels = group_size * per_group_in, w_sizes[0]
    if src.chance(0.05):
        in_channels = size(src, 0, 5, p_edge)
    if src.chance(0.05):
        w_sizes[src.integer(0, 1)] = size(src, 0, 5, p_edge)
    in_sizes = [batch, in_channels, *spatial][:rank]
    w_rank = rank if src.chance(0.95) else src.choice((2, 3, 4, 5))
    w_sizes = (w_sizes + [1] * w_rank)[:w_rank]
    out_rank = rank if src.chance(0.97) else src.choice((3, 4, 5))
    layout = src.choice(LAYOUTS)
    base_dtype = dtype(src)
    dtypes = [base_dtype if src.chance(0.95) else dtype(src) for _ in range(3)]
    bias = None
    if src.chance(0.6):
        roll = src.integer(0, 19)
        length = out_channels if roll < 15 else size(src, 0, 5, p_edge)
        sizes = (length,) if roll != 19 else (length, 1)
        bias = TensorSpec(sizes, base_dtype if src.chance(0.85) else dtype(src))
    return ConvolutionCase(
        input=TensorSpec(tuple(in_sizes), dtypes[0], dim_order(src, len(in_sizes), layout)),
        weight=TensorSpec(tuple(w_sizes), dtypes[1], dim_order(src, w_rank, layout)),
        bias=bias,
        out=TensorSpec(tuple([1] * out_rank), dtypes[2], dim_order(src, out_rank, layout)),
        stride=stride,
        padding=padding,
        dilation=dilation,
        transposed=transposed,
        output_padding=output_padding,
        groups=groups,
    )


def empty_input_with_strides_past_int32(src: Source) -> ConvolutionCase:
    """A transposed 2-D call whose input is empty (a spatial dim of 0) while its channels
    times its other spatial dim pass INT32_MAX: its strides, in which a size of 0 counts
    as 1, do not fit int32, yet out is small and not empty, so the loops run and compute
    them. ``build_case`` almost never makes one: it needs a 0, a huge size, and the padding
    that brings that size's output back to a few positions, all at once."""
    channels = src.choice((2, 3, 64, 1024))
    width = INT32_MAX // channels + 1 + src.integer(0, 2)
    kernel = src.integer(2, 3)  # the empty dim's output size is kernel - 1
    out_width = src.integer(1, 3)
    out_width += (width - out_width) % 2  # out width = width - 2 * padding
    bias = TensorSpec((1,), "float32") if src.chance(0.5) else None
    return ConvolutionCase(
        input=TensorSpec((1, channels, 0, width), "float32"),
        weight=TensorSpec((channels, 1, kernel, 1), "float32"),
        bias=bias,
        out=TensorSpec((1, 1, 1, 1), "float32"),
        stride=(1, 1),
        padding=(0, (width - out_width) // 2),
        dilation=(1, 1),
        transposed=True,
        output_padding=(0, 0),
        groups=1,
    )


def _t(*sizes: int, order: tuple[int, ...] | None = None) -> TensorSpec:
    return TensorSpec(sizes, "float32", order)


# A valid call, which legacy and current handle alike and correctly (tests/engine holds
# them to that). 1-D and 2-D only: legacy rejects a 3-D convolution, so one would be the
# reproducer of an over-strict check.
_VALID = ConvolutionCase(
    _t(1, 2, 5), _t(4, 2, 3), _t(4), _t(1, 4, 3), (1,), (0,), (1,), False, (0,), 1
)
_CHANNELS_LAST = (0, 2, 3, 1)


def valid_cases() -> tuple[ConvolutionCase, ...]:
    """Valid calls, none of them a finding: 1-D and 2-D, strided and padded, grouped,
    transposed, channels-last, dilated."""
    two_d = {"weight": _t(2, 3, 3, 3), "bias": None}
    return (
        _VALID,
        _VALID.replace(
            input=_t(1, 3, 6, 6), out=_t(1, 2, 3, 3), stride=(2, 2), padding=(1, 1), **two_d
        ),
        _VALID.replace(input=_t(2, 4, 5, 5), weight=_t(4, 2, 3, 3), out=_t(2, 4, 3, 3), groups=2),
        _VALID.replace(
            input=_t(1, 2, 4),
            weight=_t(2, 3, 3),
            bias=None,
            out=_t(1, 3, 8),
            stride=(2,),
            padding=(1,),
            transposed=True,
            output_padding=(1,),
        ),
        _VALID.replace(
            input=_t(1, 3, 4, 4, order=_CHANNELS_LAST),
            out=_t(1, 2, 2, 2, order=_CHANNELS_LAST),
            **two_d,
        ),
        _VALID.replace(
            input=_t(1, 1, 7), weight=_t(1, 1, 2), bias=None, out=_t(1, 1, 5), dilation=(2,)
        ),
    )
