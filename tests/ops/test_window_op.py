"""A toy op plugs in without touching the core: fuzzed and minimised by it.

``window_op.py`` declares a case type, two revisions and a construction, nothing more.
Its ``legacy`` divides by the stride and subtracts the kernel size before it checks
either; the core's judges (model and exact arithmetic: the toy has no C kernel and no
torch mapping) must find both bugs and shrink each to the call a person would write.
"""

import pytest
from window_op import WindowCase

from convcheck import engines, model, registry
from convcheck.campaign import Budget, Campaign
from convcheck.case import TensorSpec
from convcheck.errors import InvalidCase
from convcheck.judges import Judges


def window(length=5, kernel=(3,), stride=(1,)):
    return WindowCase(TensorSpec((1, 1, length)), TensorSpec((1, 1, 1)), kernel, stride)


def test_the_toy_keeps_the_op_protocol():
    assert isinstance(registry.get("window"), registry.Op)
    assert registry.op_of(window()) is registry.get("window")


def test_its_json_form_is_read_off_its_declaration():
    case = window(kernel=(2**62,), stride=(0, 1))
    assert registry.loads_case(case.dumps(), op="window") == case
    with pytest.raises(InvalidCase, match=r"case.groups: unknown field \(known: input, out, "):
        registry.case_from_json({**case.to_json(), "groups": 1}, "window")
    with pytest.raises(InvalidCase, match="stride: expected a list of int64"):
        registry.case_from_json({**case.to_json(), "stride": 3}, "window")


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


def campaign(revision, cases=3000, seed=1):
    with Judges(revision, op="window", use_native=False, use_torch=False) as judges:
        run = Campaign(judges, budget=Budget(cases=cases))
        run.explore(engines.load("random"), seed)
        run.minimize_all()
        return {f.key: f.case for f in run.found.values()}


def test_a_legacy_campaign_finds_both_bugs_and_shrinks_each():
    """The random engine builds the toy's calls; the model and exact arithmetic judge
    them; the shrinker takes each to the call a person writes. Both bugs are orderings:
    the division by a stride of 0 and the subtraction of a huge negative kernel size
    happen before the checks that reject those calls."""
    found = campaign("legacy")
    divided = found["ordering | output_size.steps"]
    # A stride of 0, and a kernel one longer than the input, which kernel.gt_input rejects
    # after the division: the input may be empty or one long, both as small as it gets.
    assert divided.stride == (0,) and divided.input.sizes[:2] == (1, 1), divided
    assert divided.kernel_size == (divided.input.sizes[2] + 1,), divided
    # The kernel size nearest 1 whose subtraction from a length of 1 leaves int64.
    spanned = window(length=1, kernel=(-(2**63) + 1,), stride=(1,))
    assert found["ordering | output_size.span"] == spanned
    assert len(found) == 2, sorted(found)


def test_a_current_campaign_finds_nothing():
    assert campaign("current") == {}
