"""The toy op judged by its own torch mapping and its own kernel, with no core change.

``window_torch.py`` gives the window op the two optional members convolution gives (a
torch mapping, targets): the judges start both by asking the op, compare the toy kernel
with the toy torch, and keep the toy's intentional difference out of the findings. The
core names no convolution torch call: this op's torch is not ATen's convolution.
"""

import importlib.util
import itertools

import pytest
from window_op import WindowCase
from window_torch import StandInTorch, max_pool1d

from convcheck import engines, registry
from convcheck.campaign import Budget, Campaign
from convcheck.case import TensorSpec
from convcheck.errors import ConvcheckError
from convcheck.findings import findings
from convcheck.judges import Judges
from convcheck.outcome import ACCEPT


@pytest.fixture(scope="module", autouse=True)
def judged_window():
    registry.register("judged_window", "window_torch:OP")
    yield registry.get("judged_window")
    del registry.OPS["judged_window"]
    registry.get.cache_clear()


def call(sizes=(1, 1, 5), kernel=(3,), stride=(1,), dtype="float32"):
    return WindowCase(TensorSpec(sizes, dtype=dtype), TensorSpec((1, 1, 1)), kernel, stride)


# What real torch says, by the stand-in's check id.
TORCH_SAYS = {
    "input.shape": "Expected 2D or 3D",
    "kernel_size.length": "kernel_size must be an int",
    "stride.length": "stride must be None",
    "kernel.nonpos": "kernel_size must be greater than zero",
    "stride.nonpos": "stride must be greater than zero",
    "output.invalid": "Invalid computed output size",
    "dtype": "not implemented for",
}
# Kernel sizes stay small: real max_pool1d hangs on some huge ones (window_torch.py).
CALLS = [
    call(sizes, kernel, stride)
    for sizes, kernel, stride in itertools.product(
        [(1, 1, 5), (1, 5), (0, 1, 5), (1, 0, 5), (1, 1, 0), (2, 3, 1), (1, 1, 1, 5)],
        [(3,), (1,), (0,), (-1,), (6,), (3, 1)],
        [(), (1,), (2,), (0,), (-1,), (1, 1), (2**31,), (2**62,)],
    )
] + [call(dtype="int64"), call(dtype="bool"), call(dtype="float64")]


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch not installed")
def test_the_stand_in_answers_as_real_max_pool1d_does():
    import torch
    import torch.nn.functional as F

    dtypes = {"float32": torch.float32, "float64": torch.float64}
    dtypes |= {"int64": torch.int64, "bool": torch.bool}
    for case in CALLS:
        said = max_pool1d(case)
        x = torch.zeros(case.input.sizes, dtype=dtypes[case.input.dtype])
        stride = list(case.stride)
        try:
            got = tuple(F.max_pool1d(x, list(case.kernel_size), stride).shape)
        except (RuntimeError, NotImplementedError) as e:
            assert said.verdict != ACCEPT and TORCH_SAYS[said.check] in str(e), (case, e)
        else:
            assert said.verdict == ACCEPT and said.out_sizes == got, (case, got)


def test_the_judges_start_the_ops_torch_and_kernel_and_compare_them():
    unbatched = call(sizes=(1, 5))
    cases = [call(), call(stride=(2**31,)), unbatched, call(dtype="int64")]
    with Judges("current", op="judged_window", target="python") as judges:
        assert isinstance(judges.torch, StandInTorch)
        judged = judges.judge(cases)
        found = [[f.signature for f in judges.findings(j)] for j in judged]
        stand_in = judges.torch
    assert stand_in.judged == len(cases) and stand_in.closed
    assert found == [
        [],
        [("over-strict", "stride.range")],  # the kernel bounds the stride to int32
        [],  # torch takes an unbatched input: the toy's intentional difference
        [("missing-check", "dtype")],  # the toy never checks the dtype
    ]
    # Without its explanation, the unbatched input is the kernel rejecting a good call.
    assert [f.signature for f in findings(judged[2])] == [("over-strict", "rank.input")]


def test_torch_is_left_out_for_an_op_without_a_mapping_unless_asked_for():
    with Judges("legacy", op="window", use_native=False) as judges:
        assert judges.torch is None
    with pytest.raises(ConvcheckError) as raised:
        Judges("legacy", op="window", use_native=False, use_torch=True)
    assert str(raised.value) == "op='window' has no torch mapping: judge it with --no-torch"


@pytest.mark.parametrize(
    "op, known",
    [("window", "none"), ("judged_window", "python")],
)
def test_a_target_is_one_of_the_ops_own(op, known):
    with pytest.raises(ConvcheckError) as raised:
        Judges("current", op=op, target="executorch", use_torch=False)
    assert str(raised.value) == (
        f"target='executorch': op={op!r} has no such target (its targets: {known}; "
        "or a path to a library of convcheck's C ABI)"
    )


def test_a_campaign_finds_the_toy_kernels_bound_and_shrinks_it():
    with Judges("current", op="judged_window", target="python") as judges:
        run = Campaign(judges, budget=Budget(cases=1000))
        run.explore(engines.load("random"), 1)
        run.minimize_all()
        found = {f.key: f.case for f in run.found.values()}
    assert sorted(found) == ["over-strict | stride.length", "over-strict | stride.range"]
    # The smallest stride past int32, and torch's default stride (the kernel size), each on
    # the smallest call torch accepts with it.
    assert found["over-strict | stride.range"] == call((1, 1, 1), (1,), (2**31,))
    assert found["over-strict | stride.length"] == call((1, 1, 1), (1,), ())
