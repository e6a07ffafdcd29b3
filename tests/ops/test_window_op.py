"""A toy op plugs in without touching the core: fuzzed, minimised and proven by it.

``window_op.py`` declares a case type, two revisions and a construction, nothing more.
Its ``legacy`` divides by the stride and subtracts the kernel size before it checks
either; the core's judges (model and exact arithmetic: the toy has no C kernel and no
torch mapping) must find both bugs, shrink each to the call a person would write, and
the solver must witness them on ``legacy`` and prove ``current``.
"""

import pytest
from window_op import WindowCase

from convcheck import model, ops
from convcheck.case import Case, TensorSpec
from convcheck.errors import InvalidCase


def window(length=5, kernel=(3,), stride=(1,)):
    return WindowCase(TensorSpec((1, 1, length)), TensorSpec((1, 1, 1)), kernel, stride)


def test_the_toy_keeps_the_op_protocol():
    assert isinstance(ops.get("window"), ops.Op)
    assert ops.op_of(window()) is ops.get("window")


def test_its_json_form_is_read_off_its_declaration():
    case = window(kernel=(2**62,), stride=(0, 1))
    assert Case.loads(case.dumps(), op="window") == case
    with pytest.raises(InvalidCase, match=r"case.groups: unknown field \(known: input, out, "):
        Case.from_json({**case.to_json(), "groups": 1}, "window")
    with pytest.raises(InvalidCase, match="stride: expected a list of int64"):
        Case.from_json({**case.to_json(), "stride": 3}, "window")


@pytest.mark.parametrize(
    "case, legacy, current",
    [
        (window(), "accept [1, 1, 3]", "accept [1, 1, 3]"),
        (window(stride=(2,)), "accept [1, 1, 2]", "accept [1, 1, 2]"),
        (window(kernel=(6,)), "reject kernel.gt_input", "reject kernel.gt_input"),
        (window(stride=(0,)), "accept [1, 1, 1]", "reject stride.range"),
        (window(stride=(-1,)), "reject output.invalid", "reject stride.range"),
    ],
)
def test_each_revision_runs_its_own_steps(case, legacy, current):
    assert model.run(case, "legacy").outcome.describe() == legacy
    assert model.run(case, "current").outcome.describe() == current


def test_legacy_divides_by_zero_before_it_rejects():
    _, _, found = model.classify(window(kernel=(6,), stride=(0,)), "legacy")
    assert [(f.kind, f.site) for f in found] == [("ordering", "output_size.steps")]
    _, _, found = model.classify(window(kernel=(6,), stride=(0,)), "current")
    assert found == []


def test_the_core_judges_and_shrinks_it_to_the_call_a_person_would_write():
    from convcheck.judges import Judges
    from convcheck.shrink import Shrinker

    found = window(length=9, kernel=(2**62,), stride=(0,))
    with Judges("legacy", op="window", use_native=False, use_torch=False) as judges:
        [finding] = judges.evaluate([found])[0]
        assert finding.signature == ("ordering", "output_size.steps")
        shrinker = Shrinker(judges.keeps(finding.signature, found))
        small = shrinker.shrink(found)
    # The core's passes alone (the toy has none of its own): the stride stays the 0 it
    # divides by, the kernel one more than the input is long.
    assert small == window(length=1, kernel=(2,), stride=(0,))
    assert "shrink_lists" in {p.name for p in shrinker.passes if p.shrinks}


def test_its_case_line_names_each_argument_as_its_schema_does():
    from convcheck.describe import TENSOR_LEGEND, case_legend, describe_case

    line = describe_case(window(kernel=(2**62,), stride=(0, 1)))
    assert line == "input=f32[1,1,5] out=f32[1,1,1] kernel_size=[2^62] stride=[0,1]"
    assert case_legend(window()) == TENSOR_LEGEND
