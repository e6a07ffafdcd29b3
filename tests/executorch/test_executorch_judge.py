"""The judge's interface (NativeJudge's), and the parts that need no worker: what
``expected_outcome`` makes of the model, which cases are probed, log capture."""

import json
import subprocess
import sys

import pytest
from builders import conv, t

from convcheck.ops.convolution.executorch_target import available, expected_outcome
from convcheck.ops.convolution.executorch_target._plan import Limits, make_plan
from convcheck.ops.convolution.executorch_target.worker import OVERREAD_KIND

INSTALL = "pip install executorch==1.5.1 --no-deps flatbuffers ruamel.yaml tabulate"


def test_importing_convcheck_imports_neither_torch_nor_executorch():
    code = (
        "import sys, json, convcheck, convcheck.ops.convolution.executorch_target as et;"
        "ok = et.available();"
        "print(json.dumps([m for m in sys.modules if m.split('.')[0] in "
        "('torch', 'executorch', 'flatbuffers')]))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == []


# What the pip build does where the sanitized model predicts undefined behaviour.
UNSANITIZED = {
    "division by zero traps": (conv(groups=0), ("crash", "SIGFPE")),
    "null bias loader is called": (conv(bias=t(4, dtype="bool")), ("crash", "SIGSEGV")),
    "read past the bias shows in the values": (conv(bias=t(2)), ("crash", OVERREAD_KIND)),
    "signed overflow is silent": (conv(dilation=(2**62,)), ("accept", (1, 4, 5))),
    # Probed (too large to run whole): the dtype switch and the loops do not happen.
    "probe: no dtype switch": (
        conv(
            input=t(1, 2, 1 << 28, dtype="bool"),
            weight=t(4, 2, 3, dtype="bool"),
            out=t(1, 4, 3, dtype="bool"),
            bias=None,
        ),
        ("accept", (1, 4, (1 << 28) - 2)),
    ),
    "probe: no loops": (conv(input=t(1, 2, 1 << 28), bias=t(2)), ("accept", (1, 4, (1 << 28) - 2))),
    "probe: the checks still trap": (conv(input=t(1, 2, 1 << 28), groups=0), ("crash", "SIGFPE")),
}


@pytest.mark.parametrize("name", sorted(UNSANITIZED))
def test_expected_outcome(name):
    case, (verdict, what) = UNSANITIZED[name]
    outcome = expected_outcome(case)
    assert outcome.verdict == verdict
    assert (outcome.out_sizes if verdict == "accept" else outcome.crash_kind) == what


def test_what_is_probed():
    limits = Limits()
    assert make_plan(conv(), limits).whole
    assert not make_plan(conv(input=t(1, 2, 1 << 28)), limits).whole  # memory
    assert not make_plan(conv(input=t(1, 2, 1 << 22), stride=(1,)), limits).whole  # work
    # An empty tensor whose strides do not fit 32 bits (the pybindings abort on those).
    assert not make_plan(conv(input=t(0, 2, 2**31 - 1)), limits).whole
    assert make_plan(conv(input=t(0, 2, 5)), limits).whole
    plan = make_plan(conv(bias=t(1)), limits)
    assert (plan.capacity, plan.canary) == ((1, 4, 3), 3)


def test_the_log_of_a_call_is_captured_in_process(capfd):
    pytest.importorskip("executorch", reason=INSTALL)
    if not available():
        pytest.skip(INSTALL)
    from convcheck.ops.convolution.executorch_target import worker

    worker.init({})
    answer = worker.handle({"case": conv(stride=(0,)).to_json(), "mode": "check"})
    assert (answer["verdict"], answer["check"]) == ("reject", "stride.range")
    assert "stride_is_valid" in answer["detail"]


def test_the_judge_interface(judge):
    assert judge.name == "executorch 1.5.1 portable"
    assert "executorch" in repr(judge)
    (outcome,) = judge.check([conv()])
    assert outcome.verdict == "accept" and outcome.values is None


def test_close_and_reuse():
    pytest.importorskip("executorch", reason=INSTALL)
    from convcheck.ops.convolution.executorch_target import ExecutorchJudge

    with ExecutorchJudge(jobs=1) as judge:
        assert judge.check([conv(groups=0)])[0].crash_kind == "SIGFPE"
        judge.close()
        assert judge.run([conv()])[0].verdict == "accept"  # new workers start
