"""A second op's C kernel judged through the generic C worker: the toy window op with a
kernel, an ABI header and a call unit of its own (``window_native/``, built here), its
output sizes, values and a planted crash coming back as outcomes. The worker and the wire
name no parameter of convolution's, so nothing of the core changes for it."""

import numpy as np
import pytest
from test_window_op import window

from convcheck import model
from convcheck.findings import findings
from convcheck.generate import RandomSource
from convcheck.judges import Judges
from convcheck.native import NativeJudge, build
from convcheck.values import logical_values


@pytest.fixture
def native_window(plug_native_op):
    """The window op, with its C kernel, under its own name for this test."""
    return plug_native_op("window", "window_native_op:OP")


def _sliding_sums(case) -> tuple[float, ...]:
    """out[n, c, i]: the sum of input's window at i, from the values every judge is given."""
    values = logical_values(case.input, "input")
    k, s = case.kernel_size[0], case.stride[0]
    positions = (case.input.sizes[2] - k) // s + 1
    out = np.stack([values[:, :, i * s : i * s + k].sum(axis=2) for i in range(positions)], 2)
    return tuple(out.astype(np.float32).ravel().tolist())


@pytest.mark.parametrize("revision", ["legacy", "current"])
def test_its_kernel_answers_as_its_model_does(native_window, revision):
    src = RandomSource(5)
    cases = [native_window.build_case(src, small=True) for _ in range(150)]
    cases += [window(), window(stride=(2,)), window(kernel=(6,)), window(stride=(-1,))]
    with NativeJudge(revision, op="window", jobs=2) as native:
        assert native.name == f"window {revision}"
        checked = native.check(cases)
    compared = 0
    for case, outcome in zip(cases, checked, strict=True):
        run = model.run(case, revision)
        if run.ub:  # legacy's division and subtraction before its checks: below
            continue
        assert outcome.same_answer(run.outcome), (case, outcome, run.outcome)
        compared += 1
    assert compared > 100
    assert {o.verdict for o in checked} >= {"accept", "reject"}


def test_its_output_sizes_and_values_come_back(native_window):
    cases = [window(), window(length=7, kernel=(2,), stride=(3,))]
    with NativeJudge("current", op="window") as native:
        ran = native.run(cases)
    assert [o.out_sizes for o in ran] == [(1, 1, 3), (1, 1, 2)]
    assert [o.values for o in ran] == [_sliding_sums(case) for case in cases]


def test_a_planted_crash_is_an_outcome(native_window):
    # legacy divides by the stride before it checks it; current rejects first.
    case = window(kernel=(6,), stride=(0,))
    with NativeJudge("legacy", op="window") as native:
        crashed, after = native.check([case, window()])
    assert (crashed.verdict, crashed.crash_kind) == ("crash", "division-by-zero")
    assert after.describe() == "accept [1, 1, 3]"
    with NativeJudge("current", op="window") as native:
        assert native.check([case])[0].describe() == "reject stride.range"


def test_the_judges_start_the_campaigns_op_kernel(native_window):
    with Judges("legacy", op="window", use_torch=False) as judges:
        assert judges.native is not None
        (judgement,) = judges.judge([window(kernel=(6,), stride=(0,))])
    assert judgement.native_check.crash_kind == "division-by-zero"
    assert "crash" in {f.kind for f in findings(judgement)}


def test_its_worker_and_libraries_are_its_own(native_window):
    assert build.build_worker(False, "window") != build.build_worker(False, "convolution")
    assert build.build_library("current", False, "window").name.startswith("libwindow-current")


def test_an_op_without_a_kernel_is_judged_without_one():
    with Judges("legacy", op="window", use_torch=False) as judges:
        assert judges.native is None
