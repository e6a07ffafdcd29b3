"""constant_pad_nd in ExecuTorch 1.5.1 from PyPI: the crafted program is what exir would
emit, the legacy model (made unsanitized by ``expected_outcome``) agrees with the wheel's
kernel on generated calls, our legacy C kernel computes its values, and its channels-last
padding is not torch's.
"""

import collections

import pytest
from agreement import unexpected
from pad_builders import CL, padded
from pad_builders import pad as padding
from programs import without_memory_plan

from convcheck.generate import random_cases

INSTALL = "pip install executorch==1.5.1 --no-deps flatbuffers ruamel.yaml tabulate"
pytest.importorskip("executorch", reason=INSTALL)
torch = pytest.importorskip("torch")

from convcheck.executorch_wheel import available  # noqa: E402
from convcheck.executorch_wheel.memory import Limits  # noqa: E402
from convcheck.executorch_wheel.runtime import WHOLE  # noqa: E402
from convcheck.native import NativeJudge  # noqa: E402
from convcheck.ops.constant_pad_nd.executorch_target import PadWheelJudge  # noqa: E402
from convcheck.ops.constant_pad_nd.executorch_target.expected import (  # noqa: E402
    expected_outcome,
)
from convcheck.ops.constant_pad_nd.executorch_target.program import (  # noqa: E402
    make_plan,
    program,
)

if not available():
    pytest.skip(INSTALL, allow_module_level=True)

OP = "constant_pad_nd"


@pytest.fixture(scope="module")
def wheel():
    with PadWheelJudge(OP, jobs=2, timeout=30.0) as judge:
        yield judge


def test_a_crafted_program_is_the_exported_one():
    exir = pytest.importorskip("executorch.exir", reason=INSTALL)
    from executorch.exir._serialize._flatbuffer_program import _flatbuffer_to_program

    case = padding(2, 3, pad=(1, 2, 0, 1), value=3)

    class Pad(torch.nn.Module):
        def forward(self, x):
            return torch.ops.aten.constant_pad_nd.default(x, list(case.pad), case.value)

    exported = torch.export.export(Pad(), (torch.zeros(case.input.sizes),))
    theirs = _flatbuffer_to_program(exir.to_edge(exported).to_executorch().buffer)
    ours = _flatbuffer_to_program(program(case, make_plan(case, Limits()), WHOLE))

    assert without_memory_plan(ours) == without_memory_plan(theirs)


@pytest.mark.slow  # seconds: make test keeps to its budget
def test_the_wheel_agrees_with_the_legacy_model(wheel, count=4000):
    small = count * 3 // 4
    cases = random_cases(2030, small, small=True, op=OP) + random_cases(2030, count - small, op=OP)
    judged = list(zip(cases, wheel.run(cases), strict=True))
    bad, example = unexpected(judged, expected_outcome)
    assert not bad, f"model vs executorch: {dict(bad)}; first cases: {example}"
    kinds = collections.Counter(actual.category for _, actual in judged)
    assert kinds["accept"] > count // 2 and kinds["reject out.too_small"] >= 1, kinds


def test_our_legacy_kernel_computes_the_wheels_values(wheel):
    """The plain build of our legacy C kernel beside the real one, on the same inputs:
    the same values, channels-last calls included."""
    cases = random_cases(11, 400, small=True, op=OP)
    with NativeJudge("legacy", op=OP, sanitized=False) as ours:
        mine = ours.run(cases)
    theirs = wheel.run(cases)
    compared = [
        (c, a.values, b.values)
        for c, a, b in zip(cases, theirs, mine, strict=True)
        if a.values is not None and b.values is not None
    ]
    assert len(compared) > 200
    assert any(c.input.order != tuple(range(c.input.rank)) for c, _, _ in compared)
    for case, wheels, ours_ in compared:
        assert wheels == ours_, case.dumps()


def test_the_wheel_pads_channels_last_calls_wrong(wheel):
    """ExecuTorch's own build: contiguous calls padded as torch pads them, a channels-last
    one not (its loops walk both tensors as if contiguous)."""
    contiguous = padding(1, 2, 3, 3, pad=(1, 1, 0, 2), value=4)
    channels_last = padding(1, 2, 3, 3, pad=(1, 1, 0, 2), order=CL, value=4)
    right, wrong = wheel.run([contiguous, channels_last])
    assert right.values == padded(contiguous)
    assert wrong.out_sizes == (1, 2, 5, 5) and wrong.values != padded(channels_last)
