"""Small builders for hand-written cases: a 1-D call that every check accepts, and edits."""

from convcheck.case import TensorSpec
from convcheck.ops.convolution.case import ConvolutionCase


def t(*sizes, dtype="float32", order=None):
    return TensorSpec(tuple(sizes), dtype, None if order is None else tuple(order))


def conv(**changes):
    """A valid regular 1-D convolution: input (1, 2, 5), kernel 3, 4 out channels, bias."""
    base = dict(
        input=t(1, 2, 5),
        weight=t(4, 2, 3),
        bias=t(4),
        out=t(1, 4, 3),
        stride=(1,),
        padding=(0,),
        dilation=(1,),
        transposed=False,
        output_padding=(0,),
        groups=1,
    )
    base.update(changes)
    return ConvolutionCase(**base)


def conv_t(**changes):
    """A valid transposed 1-D convolution: input (1, 4, 5), weight (4, 2, 3), out channels 2."""
    base = dict(input=t(1, 4, 5), weight=t(4, 2, 3), bias=t(2), out=t(1, 2, 7), transposed=True)
    base.update(changes)
    return conv(**base)


def groups_overflow():
    """The legacy bias check's ``groups * w.size(1)`` overflow, as a campaign first met
    it: 2-D, channels-last, every parameter off its simplest value (issue 16)."""
    return conv_t(
        input=t(2, 6, 5, 5, order=(0, 2, 3, 1)),
        weight=t(6, 4, 3, 3),
        out=t(1, 1, 1, 1, order=(0, 2, 3, 1)),
        bias=t(1),
        stride=(3, 2),
        padding=(1, 1),
        dilation=(1, 2),
        output_padding=(1, 1),
        groups=2**63 - 6,
    )


def groups_overflow_by_hand():
    """What a person writes for that bug: groups huge, ``w.size(1)`` just large enough to
    overflow with it, the bias of length 1 that selects the multiplying branch, every
    other size 1, every parameter at its simplest valid value (``conv``'s own)."""
    return conv_t(input=t(1, 1, 1), weight=t(1, 2, 1), bias=t(1), out=t(1, 1, 1), groups=2**62)


def input_strides_past_int32():
    """The loops' set-up overflows on input's int32 strides: in (1, 2, 0, 1073741824), the 0
    counting as 1, has a dim-0 stride of 1073741824 * 2, and out (1, 1, 1, 2) is not empty
    (convcheck/examples/input_strides_past_int32.json)."""
    return conv_t(
        input=t(1, 2, 0, 1073741824),
        weight=t(2, 1, 2, 1),
        bias=None,
        out=t(1, 1, 1, 1),
        stride=(1, 1),
        padding=(0, 536870911),
        dilation=(1, 1),
        output_padding=(0, 0),
    )


# Calls whose strides in the loops' set-up pass int32, too large to run, and the id current
# refuses each with. The last is a transposed 1-D weight in dim order (2, 0, 1): its own
# strides are 1, 1 and 65536, but run as 2-D, the inserted size-1 dim lands outermost and
# gets 65536 * 32768.
STRIDES_PAST_INT32 = {
    "input": (
        conv_t(input=t(1, 1024, 2097152), weight=t(1024, 1, 3), bias=None, out=t(1, 1, 2)),
        "input.stride_too_large",
    ),
    "weight": (
        conv(
            input=t(1, 1, 65536, 1),
            weight=t(1, 1, 65536, 32768),
            bias=None,
            out=t(1, 1, 1, 1),
            padding=(0, 16384),
        ),
        "weight.stride_too_large",
    ),
    "unsqueezed_weight": (
        conv_t(
            input=t(1, 65536, 1),
            weight=t(65536, 1, 32768, order=(2, 0, 1)),
            bias=None,
            out=t(1, 1, 1),
        ),
        "weight.stride_too_large",
    ),
}
