"""A small seeded generator of convolution cases for the torch oracle's tests.

Biased toward where ATen's checks and the backends' own checks sit: groups 0, -1, 1,
2, 3 and not dividing; a kernel larger than the padded input; zero batch, channel,
spatial and kernel dims; parameter lists of the wrong length; zero and negative
stride, padding, dilation and output padding; both layouts; transposed calls; a bias
present, absent, of the wrong length or rank or of another dtype; dtype mismatches.

Every tensor stays small (a few hundred elements), the input rank at most 5, so every
case can also run on real CPU. The project's Hypothesis strategies come later; this is
deliberately plain ``random.Random`` so the tests can name a seed and a count.
"""

from __future__ import annotations

import random

from convcheck.case import Case, TensorSpec, channels_last_order, contiguous_order
from convcheck.ops.convolution.case import ConvolutionCase

FLOATS = ("float32", "float64", "float16", "bfloat16")
INTS = ("int8", "uint8", "int16", "int32", "int64")


def _pick(rng: random.Random, weighted: list[tuple[object, int]]):
    values, weights = zip(*weighted, strict=True)
    return rng.choices(values, weights=weights)[0]


def _param(rng: random.Random, nd: int, kind: str) -> tuple[int, ...]:
    values = {
        "stride": [(1, 6), (2, 4), (3, 2), (0, 1), (-1, 1)],
        "padding": [(0, 6), (1, 4), (2, 2), (-1, 1)],
        "dilation": [(1, 7), (2, 3), (0, 1), (-1, 1)],
        "output_padding": [(0, 8), (1, 3), (2, 1), (-1, 1)],
    }[kind]
    length = _pick(rng, [(nd, 12), (1, 4), (0, 1), (nd + 1, 1)])
    if nd > 1 and rng.random() < 0.05:
        length = nd - 1
    if length == 1 or rng.random() < 0.5:
        v = _pick(rng, values)
        return (v,) * length
    return tuple(_pick(rng, values) for _ in range(length))


def _order(rng: random.Random, rank: int) -> tuple[int, ...]:
    if 3 <= rank <= 5 and rng.random() < 0.3:
        return channels_last_order(rank)
    return contiguous_order(rank)


def random_case(rng: random.Random) -> Case:
    nd = _pick(rng, [(1, 3), (2, 6), (3, 2)])
    transposed = rng.random() < 0.35
    groups = _pick(rng, [(1, 10), (2, 4), (3, 2), (0, 1), (-1, 1), (4, 1)])
    g = groups if groups >= 1 else 1
    # weight: [out, in/groups, k...] regular; [in, out/groups, k...] transposed
    per_group = _pick(rng, [(1, 4), (2, 3), (0, 1)])
    w0 = g * _pick(rng, [(1, 5), (2, 3), (0, 1)])
    if rng.random() < 0.08:
        w0 += 1  # not divisible by groups
    if rng.random() < 0.04:
        w0 = max(0, g - 1)  # fewer than groups
    kernel = [_pick(rng, [(1, 4), (2, 4), (3, 4), (0, 1)]) for _ in range(nd)]
    w_sizes = [w0, per_group, *kernel]

    n = _pick(rng, [(1, 8), (2, 4), (0, 1)])
    if nd <= 2 and rng.random() < 0.03:
        n = 16  # where NNPACK takes over (oneDNN disabled)
    if transposed:
        c = w0
    else:
        c = per_group * g
    if rng.random() < 0.07:
        c += _pick(rng, [(1, 2), (-1, 1)])
        c = max(c, 0)
    if rng.random() < 0.04:
        c = 0
    spatial = [_pick(rng, [(1, 3), (2, 3), (3, 3), (5, 3), (0, 1)]) for _ in range(nd)]
    in_sizes = [n, c, *spatial]

    in_rank = len(in_sizes)
    if rng.random() < 0.04:
        # a rank mismatch or a too-small weight
        if rng.random() < 0.5 and in_rank > 3:
            in_sizes = in_sizes[:-1]
        elif in_rank < 5:
            in_sizes = in_sizes + [2]
        else:
            w_sizes = w_sizes[:2]

    dtype = _pick(
        rng,
        [
            ("float32", 14),
            ("float64", 3),
            ("float16", 2),
            ("bfloat16", 2),
            ("int32", 1),
            ("int64", 1),
            ("int8", 1),
            ("uint8", 1),
            ("int16", 1),
            ("bool", 1),
        ],
    )
    w_dtype = dtype
    if rng.random() < 0.05:
        w_dtype = rng.choice(FLOATS + INTS)

    bias = None
    if rng.random() < 0.6:
        length = (per_group * g) if transposed else w0
        b_sizes: tuple[int, ...] = (length,)
        r = rng.random()
        if r < 0.06:
            b_sizes = (length + 1,)
        elif r < 0.09:
            b_sizes = (max(0, length - 1),)
        elif r < 0.11:
            b_sizes = ()
        elif r < 0.13:
            b_sizes = (1, length)
        b_dtype = dtype
        if rng.random() < 0.1:
            b_dtype = rng.choice(("float64", "float32", "bool", "int64", "float16"))
        bias = TensorSpec(b_sizes, b_dtype)

    in_spec = TensorSpec(tuple(in_sizes), dtype, _order(rng, len(in_sizes)))
    w_spec = TensorSpec(tuple(w_sizes), w_dtype, _order(rng, len(w_sizes)))
    out_spec = TensorSpec(tuple(in_sizes), dtype, contiguous_order(len(in_sizes)))
    return ConvolutionCase(
        input=in_spec,
        weight=w_spec,
        bias=bias,
        out=out_spec,
        stride=_param(rng, nd, "stride"),
        padding=_param(rng, nd, "padding"),
        dilation=_param(rng, nd, "dilation"),
        transposed=transposed,
        output_padding=_param(rng, nd, "output_padding")
        if transposed or rng.random() < 0.3
        else (0,) * nd,
        groups=groups,
    )


def random_cases(seed: int, count: int) -> list[Case]:
    rng = random.Random(seed)
    return [random_case(rng) for _ in range(count)]


# Values where int32 and int64 arithmetic break, for parameters and sizes.
HUGE_PARAMS = (2**31 - 1, 2**31, 2**32 + 1, 2**61, 2**62, 2**63 - 1, -(2**31), -(2**63))
HUGE_SIZES = (2**20, 2**31 - 1, 65536, 3 * 2**20)


def large_variant(rng: random.Random, case: Case) -> Case:
    """The same call made large: big sizes, or a parameter at an int32/int64 edge.

    Only the check path can answer these; they hold its two implementations (torch's
    C++ through the private API, and the Python fallback) to each other.
    """
    kind = rng.randrange(3)
    if kind == 0 or case.input.rank < 3:
        i = list(case.input.sizes)
        for d in rng.sample(range(len(i)), k=min(len(i), rng.randint(1, 2))):
            if i[d] != 0 or rng.random() < 0.2:
                i[d] = rng.choice(HUGE_SIZES)
        return case.replace(input=TensorSpec(tuple(i), case.input.dtype, case.input.dim_order))
    name = rng.choice(("stride", "padding", "dilation", "output_padding"))
    values = list(getattr(case, name)) or [1]
    values[rng.randrange(len(values))] = rng.choice(HUGE_PARAMS)
    changed = case.replace(**{name: tuple(values)})
    if kind == 2:
        w = list(case.weight.sizes)
        if len(w) > 2:
            w[rng.randrange(2, len(w))] = rng.choice(HUGE_SIZES)
            changed = changed.replace(
                weight=TensorSpec(tuple(w), case.weight.dtype, case.weight.dim_order)
            )
    return changed


def large_cases(seed: int, count: int) -> list[Case]:
    rng = random.Random(seed)
    return [large_variant(rng, random_case(rng)) for _ in range(count)]


def _channels_last_2d(i, w, b, stride, padding, dilation) -> Case:
    return ConvolutionCase(
        input=TensorSpec(i, "float32", channels_last_order(4)),
        weight=TensorSpec(w),
        bias=TensorSpec(b),
        out=TensorSpec(i),
        stride=stride,
        padding=padding,
        dilation=dilation,
        transposed=False,
        output_padding=(0,),
        groups=1,
    )


def verdict_key(v) -> tuple:
    """What two runs of the same cases must give alike: both answers (values included),
    the backend, the path and the torch bug."""
    return (v.outcome, v.no_onednn, v.backend, v.path, v.torch_bug)


# The two reproducers of "torch itself crashes and miscomputes on some small
# channels-last calls": tensors channels-last and contiguous at once (C = 1, W = 1).
SEGV = _channels_last_2d((2, 1, 5, 1), (3, 1, 2, 1), (3,), (2, 2), (0, 1), (1, 2))
GARBAGE = _channels_last_2d((2, 1, 7, 1), (2, 1, 3, 3), (2,), (1, 2), (2, 1), (1, 1))
