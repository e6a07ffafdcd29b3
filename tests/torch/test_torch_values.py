"""Values of accepted small cases against an independent numpy loop.

The loop reads the same deterministic inputs (``convcheck.values``), computes each output
element as the definition says (regular: a window of the padded, dilated input; transposed:
every input element scattered through the kernel), in exact integer arithmetic, then
rounds to the output dtype: floats within the dtype's tolerance, integers exactly (wrapping
like the tensor's own arithmetic).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

pytest.importorskip("torch", reason="the torch judge needs PyTorch")
from convcheck.case import Case  # noqa: E402
from convcheck.ops.convolution.case import ConvolutionCase
from convcheck.ops.convolution.torch_oracle._compare import first_difference  # noqa: E402
from convcheck.values import logical_values  # noqa: E402

WRAP = {"int8": np.int8, "uint8": np.uint8, "int16": np.int16, "int32": np.int32, "int64": np.int64}


def _param(values, i, default):
    if len(values) == 1:
        return values[0]
    return values[i] if values else default


def reference(case: Case) -> np.ndarray:
    """The output of ``case``, as exact integers (object array), by the definition."""
    x = logical_values(case.input, "input").astype(np.int64)
    w = logical_values(case.weight, "weight").astype(np.int64)
    nd = case.input.rank - 2
    g = case.groups
    s = [_param(case.stride, i, 1) for i in range(nd)]
    p = [_param(case.padding, i, 0) for i in range(nd)]
    d = [_param(case.dilation, i, 1) for i in range(nd)]
    op = [_param(case.output_padding, i, 0) for i in range(nd)]
    n, c = case.input.sizes[:2]
    spatial_in = case.input.sizes[2:]
    kernel = case.weight.sizes[2:]
    if case.transposed:
        c_out = case.weight.sizes[1] * g
        spatial = [
            (spatial_in[i] - 1) * s[i] - 2 * p[i] + d[i] * (kernel[i] - 1) + op[i] + 1
            for i in range(nd)
        ]
    else:
        c_out = case.weight.sizes[0]
        spatial = [
            (spatial_in[i] + 2 * p[i] - d[i] * (kernel[i] - 1) - 1) // s[i] + 1 for i in range(nd)
        ]
    if c == 0:
        c_out = 0  # an empty channel dim gives an empty output channel dim
    out = np.zeros((n, c_out, *spatial), dtype=np.int64)
    if n and c:
        c_in_g = c // g
        c_out_g = c_out // g
        taps = list(itertools.product(*(range(k) for k in kernel)))
        if case.transposed:
            for pos in itertools.product(*(range(v) for v in spatial_in)):
                for k in taps:
                    o = tuple(pos[i] * s[i] - p[i] + k[i] * d[i] for i in range(nd))
                    if not all(0 <= o[i] < spatial[i] for i in range(nd)):
                        continue
                    for grp in range(g):
                        xin = x[(slice(None), slice(grp * c_in_g, (grp + 1) * c_in_g), *pos)]
                        wk = w[(slice(grp * c_in_g, (grp + 1) * c_in_g), slice(None), *k)]
                        out[(slice(None), slice(grp * c_out_g, (grp + 1) * c_out_g), *o)] += (
                            xin @ wk
                        )
        else:
            for o in itertools.product(*(range(v) for v in spatial)):
                for k in taps:
                    pos = tuple(o[i] * s[i] - p[i] + k[i] * d[i] for i in range(nd))
                    if not all(0 <= pos[i] < spatial_in[i] for i in range(nd)):
                        continue
                    for grp in range(g):
                        xin = x[(slice(None), slice(grp * c_in_g, (grp + 1) * c_in_g), *pos)]
                        wk = w[(slice(grp * c_out_g, (grp + 1) * c_out_g), slice(None), *k)]
                        out[(slice(None), slice(grp * c_out_g, (grp + 1) * c_out_g), *o)] += (
                            xin @ wk.T
                        )
    if case.bias is not None and out.size:
        b = logical_values(case.bias, "bias").astype(np.int64)
        out += b.reshape((1, c_out) + (1,) * nd)
    return out


def as_dtype(exact: np.ndarray, dtype: str) -> list[float]:
    if dtype in WRAP:
        return exact.astype(WRAP[dtype]).astype(np.float64).reshape(-1).tolist()
    return exact.astype(np.float64).reshape(-1).tolist()


def test_reference_loop_matches_a_hand_computed_case():
    from convcheck.case import TensorSpec

    # input 0..: (i*7 % 11) - 5 -> [-5, 2, -2, 5, 1]; weight offset 3 -> [-2, 5, 1]
    case = ConvolutionCase(
        TensorSpec((1, 1, 5)),
        TensorSpec((1, 1, 3)),
        None,
        TensorSpec((1, 1, 3)),
        (1,),
        (0,),
        (1,),
        False,
        (0,),
        1,
    )
    x, w = [-5, 2, -2, 5, 1], [-2, 5, 1]
    expected = [sum(x[o + k] * w[k] for k in range(3)) for o in range(3)]
    assert reference(case).reshape(-1).tolist() == expected


def test_values_of_accepted_small_cases_match_numpy(generated):
    cases, verdicts = generated
    checked = skipped_bugs = 0
    failures = []
    for case, verdict in zip(cases, verdicts, strict=True):
        for outcome in (verdict.outcome, verdict.no_onednn):
            if outcome.verdict != "accept" or outcome.values is None:
                continue
            if verdict.torch_bug and outcome is verdict.outcome:
                skipped_bugs += 1  # torch's own wrong values, reported as torch-bug
                continue
            dtype = verdict.out_dtype or case.input.dtype
            if dtype != case.input.dtype:
                continue  # the Empty backend's promoted dtype: no values anyway
            expected = as_dtype(reference(case), dtype)
            diff = first_difference(outcome.values, expected, dtype)
            checked += 1
            if diff is not None:
                failures.append((case.dumps(), dtype, diff))
    print(f"values compared with numpy: {checked} outputs ({skipped_bugs} torch-bug skipped)")
    assert not failures, failures[:3]
    assert checked >= 400


NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize(
    ("a", "b", "dtype", "first"),
    [
        ((1.0, NAN, INF, -0.0), (1.0, NAN, INF, 0.0), "float32", None),  # NaN, inf, signed 0
        ((1e6, 2.0), (1e6 + 9.0, 2.0), "float32", None),  # within 1e-5 of the larger
        ((1e6, 2.0), (1e6 + 11.0, 2.0), "float32", (0, 1e6, 1e6 + 11.0)),
        ((0.5, 3.0), (0.5 + 2e-6, 3.1), "float32", (1, 3.0, 3.1)),  # at least 1: 2e-6 is close
        ((1.0, INF), (1.0, -INF), "float64", (1, INF, -INF)),
        ((1.0, 2.0), (1.0, NAN), "float16", (1, 2.0, NAN)),
        ((1.0, 1e308), (1.0, -1e308), "float64", (1, 1e308, -1e308)),  # the gap overflows
        ((7.0,), (8.0,), "int32", (0, 7.0, 8.0)),  # integers exactly
        ((1.0, 2.0), (1.0,), "float32", (1, NAN, NAN)),
    ],
)
def test_first_difference_finds_the_first_element_beyond_the_tolerance(a, b, dtype, first):
    got = first_difference(a, b, dtype)
    if first is None:
        assert got is None
    else:
        assert got is not None and got[0] == first[0]
        assert all(x == y or (x != x and y != y) for x, y in zip(got[1:], first[1:], strict=True))
