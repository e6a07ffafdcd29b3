"""Calls of the two pooling ops, written as a person writes them in a test."""

from convcheck.case import TensorSpec
from convcheck.ops.avg_pool2d.case import AvgPool2dCase
from convcheck.ops.max_pool2d_with_indices.case import MaxPool2dWithIndicesCase


def avg(
    sizes=(1, 1, 4, 4),
    kernel=(2, 2),
    stride=(),
    padding=(0,),
    ceil_mode=False,
    count_include_pad=True,
    divisor=None,
    dtype="float32",
    order=None,
    out_order=None,
    fill=None,
):
    return AvgPool2dCase(
        TensorSpec(sizes, dtype, order),
        TensorSpec((1,) * len(sizes), dtype, out_order),
        kernel,
        stride,
        padding,
        ceil_mode,
        count_include_pad,
        divisor,
        fill,
    )


def max_pool(
    sizes=(1, 1, 4, 4),
    kernel=(2, 2),
    stride=(),
    padding=(0,),
    dilation=(1,),
    ceil_mode=False,
    dtype="float32",
):
    out = TensorSpec((1,) * len(sizes), dtype)
    return MaxPool2dWithIndicesCase(
        TensorSpec(sizes, dtype),
        out,
        TensorSpec(out.sizes, "int64"),
        kernel,
        stride,
        padding,
        dilation,
        ceil_mode,
    )
