"""The run entry's values equal a plain reference convolution, written here from the
definition with loops over numpy arrays of ``convcheck.values.logical_values``.

Every rank (1-D, 2-D, 3-D), regular and transposed, groups, bias or none, contiguous,
channels-last and mixed layouts, and every real dtype.
"""

import itertools

import numpy as np
import pytest
from builders import t

from convcheck.case import DTYPES, Case
from convcheck.ops.convolution.case import ConvolutionCase
from convcheck.values import logical_values

CL4 = (0, 2, 3, 1)
CL5 = (0, 2, 3, 4, 1)
REAL_DTYPES = [d for d in DTYPES if d != "bool"]
INTEGER_DTYPES = ("uint8", "int8", "int16", "int32", "int64")
RELATIVE_TOLERANCE = {"float32": 1e-5, "float64": 1e-12, "float16": 3e-2, "bfloat16": 3e-2}


def reference(case: Case) -> np.ndarray:
    """out in logical order, float64 (exact for the small integers of logical_values)."""
    x = logical_values(case.input, "input")
    w = logical_values(case.weight, "weight")
    b = None if case.bias is None else logical_values(case.bias, "bias")
    nd = x.ndim - 2
    s, p, d = (_per_dim(v, nd) for v in (case.stride, case.padding, case.dilation))
    kernel = w.shape[2:]
    groups = case.groups
    in_per_group = x.shape[1] // groups
    if not case.transposed:
        out_channels = w.shape[0]
        spatial = [
            (x.shape[2 + i] + 2 * p[i] - d[i] * (kernel[i] - 1) - 1) // s[i] + 1 for i in range(nd)
        ]
        out = np.zeros((x.shape[0], out_channels, *spatial))
        out_per_group = out_channels // groups
        for n, oc in itertools.product(range(x.shape[0]), range(out_channels)):
            g = oc // out_per_group
            for o in itertools.product(*map(range, spatial)):
                total = 0.0
                for icg, k in itertools.product(
                    range(in_per_group), itertools.product(*map(range, kernel))
                ):
                    i = [o[j] * s[j] + k[j] * d[j] - p[j] for j in range(nd)]
                    if all(0 <= i[j] < x.shape[2 + j] for j in range(nd)):
                        total += x[(n, g * in_per_group + icg, *i)] * w[(oc, icg, *k)]
                out[(n, oc, *o)] = total
    else:
        op = _per_dim(case.output_padding, nd)
        out_per_group = w.shape[1]
        out_channels = out_per_group * groups
        spatial = [
            (x.shape[2 + i] - 1) * s[i] - 2 * p[i] + d[i] * (kernel[i] - 1) + op[i] + 1
            for i in range(nd)
        ]
        out = np.zeros((x.shape[0], out_channels, *spatial))
        for n, ic in itertools.product(range(x.shape[0]), range(x.shape[1])):
            g = ic // in_per_group
            for i in itertools.product(*map(range, x.shape[2:])):
                for ocg, k in itertools.product(
                    range(out_per_group), itertools.product(*map(range, kernel))
                ):
                    o = [i[j] * s[j] + k[j] * d[j] - p[j] for j in range(nd)]
                    if all(0 <= o[j] < spatial[j] for j in range(nd)):
                        out[(n, g * out_per_group + ocg, *o)] += x[(n, ic, *i)] * w[(ic, ocg, *k)]
    if b is not None:
        out += b.reshape((1, -1) + (1,) * nd)
    return out


def _per_dim(values, nd):
    return [values[0]] * nd if len(values) == 1 else list(values)


def make(
    input,
    weight,
    out,
    bias=None,
    transposed=False,
    groups=1,
    stride=(1,),
    padding=(0,),
    dilation=(1,),
    output_padding=(0,),
):
    return ConvolutionCase(
        input,
        weight,
        bias,
        out,
        tuple(stride),
        tuple(padding),
        tuple(dilation),
        transposed,
        tuple(output_padding),
        groups,
    )


def with_dtype(case: Case, dtype: str) -> Case:
    def retype(spec):
        return None if spec is None else spec.__class__(spec.sizes, dtype, spec.dim_order)

    return case.replace(
        input=retype(case.input),
        weight=retype(case.weight),
        bias=retype(case.bias),
        out=retype(case.out),
    )


# Shapes: out sizes are given right, though the kernel computes them itself.
SHAPES = {
    "1d": make(
        t(2, 2, 7), t(4, 2, 3), t(2, 4, 3), bias=t(4), stride=(2,), padding=(1,), dilation=(2,)
    ),
    "1d_groups_no_bias": make(t(1, 4, 6), t(6, 2, 2), t(1, 6, 5), groups=2),
    "1d_transposed": make(
        t(1, 4, 4),
        t(4, 3, 3),
        t(1, 6, 10),
        bias=t(6),
        transposed=True,
        groups=2,
        stride=(2,),
        padding=(1,),
        output_padding=(1,),
    ),
    "2d": make(
        t(1, 3, 5, 4), t(2, 3, 2, 3), t(1, 2, 5, 2), bias=t(2), padding=(1, 0), stride=(1, 1)
    ),
    "2d_channels_last_groups": make(
        t(2, 4, 4, 5, order=CL4),
        t(6, 2, 3, 2, order=CL4),
        t(2, 6, 2, 4, order=CL4),
        groups=2,
        dilation=(1, 1),
    ),
    "2d_transposed_channels_last": make(
        t(1, 4, 3, 3, order=CL4),
        t(4, 1, 2, 3, order=CL4),
        t(1, 2, 4, 7, order=CL4),
        bias=t(2),
        transposed=True,
        groups=2,
        stride=(1, 2),
        padding=(0, 1),
    ),
    "2d_transposed_any_weight_order": make(
        t(1, 2, 3, 2), t(2, 1, 2, 2, order=(1, 0, 2, 3)), t(1, 1, 4, 3), bias=t(1), transposed=True
    ),
    "3d": make(
        t(1, 2, 3, 4, 3),
        t(4, 2, 2, 2, 2),
        t(1, 4, 3, 2, 2),
        bias=t(4),
        padding=(1, 0, 0),
        stride=(1, 2, 1),
    ),
    "3d_channels_last_groups": make(
        t(2, 4, 3, 3, 4, order=CL5),
        t(4, 2, 2, 1, 2, order=CL5),
        t(2, 4, 2, 3, 3, order=CL5),
        bias=t(4),
        groups=2,
    ),
    "3d_transposed_mixed_layouts": make(
        t(1, 2, 2, 3, 2, order=CL5),
        t(2, 2, 2, 2, 1),
        t(1, 2, 3, 7, 1),
        bias=t(2),
        transposed=True,
        groups=1,
        stride=(1, 2, 1),
        dilation=(1, 1, 2),
        padding=(0, 0, 1),
        output_padding=(0, 1, 1),
    ),
}
# legacy has 1-D and 2-D only, and needs input and out in the same layout.
LEGACY_SHAPES = [
    name
    for name, case in SHAPES.items()
    if case.input.rank < 5 and case.input.order == case.out.order
]


def assert_values_match(outcome, case: Case) -> None:
    assert outcome.verdict == "accept", outcome
    expected = reference(case)
    assert outcome.out_sizes == expected.shape
    got = np.array(outcome.values).reshape(expected.shape)
    dtype = case.out.dtype
    if dtype in INTEGER_DTYPES:
        wrapped = expected.astype(np.int64).astype(dtype).astype(np.float64)
        np.testing.assert_array_equal(got, wrapped)
    else:
        rtol = RELATIVE_TOLERANCE[dtype]
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("name", SHAPES)
def test_current_matches_reference(current, name):
    case = SHAPES[name]
    (outcome,) = current.run([case])
    assert_values_match(outcome, case)


@pytest.mark.parametrize("name", LEGACY_SHAPES)
def test_legacy_matches_reference(legacy, name):
    case = SHAPES[name]
    (outcome,) = legacy.run([case])
    assert_values_match(outcome, case)


@pytest.mark.parametrize("dtype", REAL_DTYPES)
def test_every_real_dtype(current, dtype):
    names = ["2d", "2d_transposed_channels_last", "3d_channels_last_groups"]
    cases = [with_dtype(SHAPES[name], dtype) for name in names]
    for case, outcome in zip(cases, current.run(cases), strict=True):
        assert_values_match(outcome, case)


def test_bias_of_another_dtype_is_converted(current):
    case = SHAPES["1d"]
    case = case.replace(bias=t(4, dtype="int8"))
    (outcome,) = current.run([case])
    assert_values_match(outcome, case)


def test_plain_build_computes_the_same(current, current_plain):
    cases = list(SHAPES.values())
    assert current_plain.run(cases) == current.run(cases)


def test_too_large_to_run_is_answered_like_a_check(current):
    case = make(t(1, 1, 1 << 21), t(1, 1, 1), t(1, 1, 1 << 21))
    (outcome,) = current.run([case])
    assert outcome.describe() == f"accept [1, 1, {1 << 21}]"
    assert outcome.values is None
