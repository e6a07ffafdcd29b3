"""Small builders for hand-written cases: a 1-D call that every check accepts, and edits."""

from convcheck.case import Case, TensorSpec


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
    return Case(**base)


def conv_t(**changes):
    """A valid transposed 1-D convolution: input (1, 4, 5), weight (4, 2, 3), out channels 2."""
    base = dict(input=t(1, 4, 5), weight=t(4, 2, 3), bias=t(2), out=t(1, 2, 7), transposed=True)
    base.update(changes)
    return conv(**base)
