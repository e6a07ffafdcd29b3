"""The torch judge's speed shortcuts against the plain way, on generated cases (a seed and
a count each): asking torch's backend choice, or the whole check path, again on the check
path's arguments equals choosing afresh; a worker's tensors, made once for a case's two
calls from value sequences made once, give the same answers as tensors made for each call
and hold ``convcheck.values``' values; the check path's zero-stride tensors, kept by
shape, are the shapes asked for."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest

torch = pytest.importorskip("torch", reason="the torch judge needs PyTorch")

from torch_cases import large_cases, random_cases, verdict_key  # noqa: E402

import convcheck.ops.convolution.torch_oracle as oracle  # noqa: E402
from convcheck.case import Case, TensorSpec  # noqa: E402
from convcheck.generate import random_cases as project_cases  # noqa: E402
from convcheck.ops.convolution.case import ConvolutionCase  # noqa: E402
from convcheck.ops.convolution.torch_oracle import _torch  # noqa: E402
from convcheck.ops.convolution.torch_oracle._checks import backend_choice, check_path  # noqa: E402
from convcheck.values import logical_values  # noqa: E402

SETTINGS = list(itertools.product((1, 2), (True, False)))  # (threads, oneDNN)


def test_asking_again_on_the_check_paths_arguments_equals_choosing_afresh():
    """``backend_choice(checked=...)`` asks ``_select_conv_backend`` again on the zero-stride
    tensors and lists the check path made, under other settings. They are a function of
    the case alone (sizes, dtypes, bias, parameters; never the settings), so the answer
    is the fresh choice's, for every pair of settings, rejections before the choice
    included."""
    if not _torch.has_select_conv_backend():
        pytest.skip("this torch has no _select_conv_backend: nothing is asked again")
    cases = (
        _thread_dependent_cases()
        + random_cases(31, 800)
        + large_cases(32, 300)
        + project_cases(33, 600, small=True)
        + project_cases(34, 600)
    )
    # As earlier tests left them: after tests/executorch, torch runs 1 thread.
    before = torch.get_num_threads(), torch.backends.mkldnn.enabled
    asked = differ = 0
    for case in cases:
        fresh = {
            (t, o): backend_choice(case, threads=t, onednn=o, private=True) for t, o in SETTINGS
        }
        differ += fresh[1, True] != fresh[2, True]
        for threads, onednn in SETTINGS:
            checked = check_path(case, threads=threads, onednn=onednn, private=True)
            assert checked.backend == fresh[threads, onednn], case.dumps()
            asked += checked.choose is not None
            for t, o in SETTINGS:
                again = backend_choice(case, threads=t, onednn=o, private=True, checked=checked)
                assert again == fresh[t, o], (case.dumps(), (threads, onednn), (t, o))
            # The whole check path under other settings, on the arguments this one made:
            # the fresh run's verdict, backend and exception type.
            for t, o in SETTINGS:
                reused = check_path(case, threads=t, onednn=o, private=True, again=checked)
                afresh = check_path(case, threads=t, onednn=o, private=True)
                assert reused == afresh, (case.dumps(), (threads, onednn), (t, o))
    assert asked >= len(cases), "too few choices asked again"
    assert differ >= 10, "too few cases whose backend depends on the thread count"
    assert (torch.get_num_threads(), torch.backends.mkldnn.enabled) == before


def _thread_dependent_cases() -> list[Case]:
    """float32 calls around oneDNN's thread-count rule (1x1 kernels, small batches)."""
    cases = []
    for n, groups, kernel, transposed, bias in itertools.product(
        (1, 2, 16), (1, 2), ((1, 1), (1, 3), (4, 4), (1,)), (False, True), (False, True)
    ):
        w = (4, 2, *kernel) if not transposed else (4, 2 // groups, *kernel)
        spatial = (5,) * len(kernel)
        out_channels = 4 if not transposed else 2 // groups * groups
        cases.append(
            ConvolutionCase(
                TensorSpec((n, 2 * groups if not transposed else 4, *spatial)),
                TensorSpec(w),
                TensorSpec((out_channels,)) if bias else None,
                TensorSpec((n, out_channels, *spatial)),
                (1,),
                (0,),
                (1,),
                transposed,
                (0,),
                groups,
            )
        )
    return cases


def test_one_set_of_tensors_for_a_cases_two_calls_gives_each_calls_own_answers(judge, monkeypatch):
    """A worker makes a case's tensors once for its oneDNN on and off calls when they
    share a request; with one call a request, each call makes its own. The verdicts,
    sizes, values and torch bugs are the same."""
    cases = []
    for case in project_cases(35, 700, small=True):
        # Next to it, the same input with another bias: its tensors are not the case's.
        cases += [
            case,
            replace(case, bias=None if case.bias else TensorSpec(case.weight.sizes[:1])),
        ]
    shared = judge.judge(cases, values=True)
    monkeypatch.setattr(oracle, "CALLS_PER_REQUEST", 1)
    alone = judge.judge(cases, values=True)
    both = [v for v in shared if v.path == "real" and v.backend in oracle.ONEDNN_BACKENDS]
    assert sum(v.outcome.values is not None for v in both) >= 50, "too few pairs compared"
    for case, a, b in zip(cases, shared, alone, strict=True):
        assert verdict_key(a) == verdict_key(b), case.dumps()


DTYPES = ("float32", "float64", "float16", "bfloat16", "uint8", "int8", "int16", "int32", "int64")


@pytest.mark.parametrize("dtype", DTYPES + ("bool",))
def test_real_tensors_hold_the_shared_values_in_every_dtype_role_and_order(dtype):
    """``real_tensor`` copies a prefix of one sequence made per role and dtype into a
    buffer of its own: the same values as ``logical_values``, element by element, for
    every layout, and again after a larger tensor has made the sequence longer."""
    specs = [
        TensorSpec((2, 3, 4, 5), dtype),
        TensorSpec((2, 3, 4, 5), dtype, (0, 2, 3, 1)),
        TensorSpec((3, 1, 2, 2, 2), dtype, (4, 0, 3, 1, 2)),
        TensorSpec((7,), dtype),
        TensorSpec((1, 13, 1), dtype, (2, 1, 0)),
        TensorSpec((3, 0, 4), dtype),
        TensorSpec((2, 5000), dtype),  # past the first sequence's length
        TensorSpec((5, 11), dtype, (1, 0)),
    ]
    for spec, role in itertools.product(specs, ("input", "weight", "bias")):
        t = _torch.real_tensor(spec, role)
        assert t.dtype == _torch.torch_dtype(dtype)
        assert tuple(t.shape) == spec.sizes
        expected = torch.empty([spec.sizes[d] for d in spec.order], dtype=t.dtype).permute(
            [spec.order.index(i) for i in range(spec.rank)]
        )
        assert t.stride() == expected.stride(), spec
        # a buffer of its own, not a view of the shared sequence
        assert t.untyped_storage().nbytes() == spec.numel * t.element_size(), spec
        assert t.double().tolist() == logical_values(spec, role).tolist(), (spec, role)


def test_the_check_paths_arithmetic_equals_wrapping_with_its_events():
    """``AtenWrapping`` answers an int64 sum, product, quotient or remainder that needs no
    wrap at once: the same values, undefined-behaviour events and width flag as
    ``Wrapping`` on seeded operands, the edges (0, -1, INT64_MIN) included."""
    import random

    from convcheck.fixedint import INT64_MAX, INT64_MIN, Wrapping
    from convcheck.ops.convolution.torch_oracle.aten import AtenWrapping

    rng = random.Random(41)
    edges = [0, 1, -1, 2, -2, 7, -7, INT64_MIN, INT64_MIN + 1, INT64_MAX, 2**62, -(2**62)]

    def operand() -> int:
        return rng.choice(
            [rng.choice(edges), rng.randint(-100, 100), rng.randint(INT64_MIN, INT64_MAX)]
        )

    for _ in range(20000):
        a, b = operand(), operand()
        plain, fast = Wrapping(), AtenWrapping()
        for name in ("add_i64", "sub_i64", "mul_i64", "div_i64", "rem_i64"):
            got, want = getattr(fast, name)(a, b, "site"), getattr(plain, name)(a, b, "site")
            assert got == want, (name, a, b)
        assert (fast.ub, fast.left_width) == (plain.ub, plain.left_width), (a, b)


def test_zero_stride_tensors_kept_by_shape_are_the_asked_shape_over_one_element(monkeypatch):
    """The check path's zero-stride tensors are kept by sizes and dtype: each one kept or
    made has the sizes and dtype asked for, every stride 0 and one element of memory,
    and the dictionary that keeps them stays within its bound."""
    monkeypatch.setattr(_torch, "_ZERO_STRIDE_KEPT", 16)
    monkeypatch.setattr(_torch, "_ZERO_STRIDE", {})
    shapes = [(n, c, 2**31 - 1, w) for n in (0, 1, 5) for c in (1, 3) for w in (1, 2**20)]
    for dtype in ("float32", "bfloat16", "int64", "bool"):
        for sizes in shapes * 2:  # the second time, most come from the dictionary
            t = _torch.zero_stride_tensor(list(sizes), dtype)
            assert tuple(t.shape) == sizes and t.dtype == _torch.torch_dtype(dtype)
            assert set(t.stride()) == {0}
            assert t.untyped_storage().nbytes() == t.element_size()
            assert len(_torch._ZERO_STRIDE) <= 16


def test_a_onednn_transposed_call_past_the_stride_limit_is_judged_by_its_checks(judge, monkeypatch):
    """oneDNN's transposed convolution takes time in proportion to the stride (0.8 s at
    2^28 with a batch of 2): past ``ONEDNN_TRANSPOSED_STRIDE`` the checks judge the call,
    and they answer what the real call answers."""

    def call(stride: int) -> Case:
        def t(*sizes):
            return TensorSpec(sizes)

        return ConvolutionCase(
            t(2, 3, 1), t(3, 2, 2), None, t(2, 2, 2), (stride,), (0,), (1,), True, (0,), 1
        )

    limit = oracle.ONEDNN_TRANSPOSED_STRIDE
    at, past = judge.judge([call(limit), call(2**28)])
    assert at.backend == past.backend == "MkldnnTranspose"
    assert (at.path, past.path) == ("real", "checks")
    monkeypatch.setattr(oracle, "ONEDNN_TRANSPOSED_STRIDE", 2**62)
    real = judge.judge([call(2**28)])[0]
    assert real.path == "real"
    assert real.outcome.verdict == "accept" and real.outcome.same_answer(past.outcome)
    assert real.torch_bug is None and past.torch_bug is None
