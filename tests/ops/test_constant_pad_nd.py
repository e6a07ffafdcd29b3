"""``constant_pad_nd``: the model of both revisions against each other, against torch's
check path, and the check path against real torch.

The issue's reproducers by hand; a seeded campaign of the model alone finds every class
``legacy``'s model can see, one report row each, and nothing on ``current``; ``current``
and torch part only where ``differences.INTENTIONAL`` says why.
"""

import math

import pytest
from model_campaign import campaign, classes

from convcheck import model, registry
from convcheck.case import TensorSpec
from convcheck.generate import RandomSource
from convcheck.ops.constant_pad_nd.case import ConstantPadNdCase
from convcheck.ops.constant_pad_nd.differences import INTENTIONAL
from convcheck.ops.constant_pad_nd.generate import build_case, valid_cases
from convcheck.ops.constant_pad_nd.known_bugs import LEGACY_BUG_CLASSES
from convcheck.ops.constant_pad_nd.torch_checks import check_path, normalize

OP = registry.get("constant_pad_nd")


def pad(sizes=(1,), pads=(1, 1), value=0, dtype="float32"):
    rank = len(sizes)
    return ConstantPadNdCase(
        TensorSpec(sizes, dtype), tuple(pads), value, TensorSpec((1,) * rank, dtype)
    )


def test_it_is_registered_and_reads_its_json():
    assert registry.op_of(pad()) is OP
    case = pad((2, 3), (2**62, 2**62), -5, "uint8")
    assert registry.loads_case(case.dumps(), op="constant_pad_nd") == case


@pytest.mark.parametrize(
    "case, legacy, current",
    [
        (pad(), "accept [3]", "accept [3]"),
        (pad((2, 3), (1, 0, 0, 2)), "accept [4, 4]", "accept [4, 4]"),
        (pad((1,), (1,)), "reject pad.odd_length", "reject pad.odd_length"),
        (pad((1,), (0, 0, 0, 0)), "reject pad.too_long", "reject pad.too_long"),
        # Torch crops with a negative pad, as long as the dim keeps a size.
        (pad((3,), (-1, -1)), "reject pad.range", "accept [1]"),
        (pad((1,), (5, -2)), "reject pad.range", "reject output.negative"),
        # The value is checked only where something is padded, as torch fills only then.
        (pad((1,), (0, 0), 300, "uint8"), "reject value.overflow", "accept [1]"),
        (pad((1,), (0, 1), -255, "uint8"), "accept [2]", "accept [2]"),
        (pad((1,), (0, 1), 70000, "float16"), "reject value.overflow", "reject value.overflow"),
        (pad((1,), (0, 1), 2**63 - 1, "bool"), "accept [2]", "accept [2]"),
        # Padding before a dim whose out is empty: the loops' step is 0.
        (pad((1, 0), (0, 0, 1, 0)), "reject out.too_small", "accept [2, 0]"),
        # The issue's: the pair's sum overflows int64 (kernel_ops_util.cpp:640); its
        # wrapped size narrows to 1, and the loops' guard refuses what the resize allowed.
        (pad((1,), (2**62, 2**62)), "reject out.too_small", "reject pad.range"),
        (pad((1,), (2**31, 0)), "reject out.resize", "reject pad.range"),
    ],
)
def test_each_revision_runs_its_own_steps(case, legacy, current):
    assert model.run(case, "legacy").outcome.describe() == legacy
    assert model.run(case, "current").outcome.describe() == current


@pytest.mark.parametrize(
    "case, found",
    [
        (
            pad((1,), (2**62, 2**62)),
            {("overflow", "output_sizes.dim0.pad_sum"), ("ordering", "output_sizes.dim0.pad_sum")},
        ),
        (
            pad((1,), (0, 2**63 - 1)),
            {
                ("overflow", "output_sizes.dim0.plus_size"),
                ("ordering", "output_sizes.dim0.plus_size"),
            },
        ),
        (pad((1,), (2**32, 0)), {("overflow", "output_sizes.dim0.narrow")}),
        (pad((2, 2, 2**30 - 1), (1, 0), 300, "uint8"), {("ordering", "out_strides.dim1")}),
    ],
)
def test_legacy_overflows_where_the_issue_says_and_current_does_not(case, found):
    assert {(f.kind, f.site) for f in model.classify(case, "legacy")[2]} == found
    assert model.classify(case, "current")[2] == []


def test_a_legacy_campaign_finds_every_class_the_model_sees_one_row_each():
    found = campaign(OP.name, "legacy")
    named = classes(OP.name, found)
    # The model sees UB and narrowing; the over-strict classes need torch (below).
    assert set(named.values()) == {
        "pad sum overflow",
        "output size past 32 bits",
        "out strides past int32",
    }, named
    narrowed = found["overflow | output_sizes.dim*.narrow"].case
    assert narrowed.input.sizes == (1,) and 1 + sum(narrowed.pad) == 2**31, narrowed


def test_a_current_campaign_finds_nothing():
    assert campaign(OP.name, "current") == {}


def test_legacy_over_strict_classes_show_against_torch():
    """Calls torch accepts and legacy refuses, each named by its class."""
    for case, check in [
        (pad((3,), (-1, -1)), "pad.range"),
        (pad((1,), (0, 0), 300, "uint8"), "value.overflow"),
        (pad((1, 0), (0, 0, 1, 0)), "out.too_small"),
    ]:
        assert check_path(case).verdict == "accept"
        outcome = model.run(case, "legacy").outcome
        assert outcome.check == check
        assert OP.bug_class(("over-strict", check)) in LEGACY_BUG_CLASSES


def test_current_and_torch_part_only_where_intended():
    src = RandomSource(2)
    compared = 0
    for _ in range(2000):
        case = build_case(src)
        kernel, torch = model.run(case, "current").outcome, check_path(case)
        if kernel.verdict == "reject" and kernel.check in INTENTIONAL:
            continue
        compared += 1
        # torch's dispatcher refuses a pad below -2^62 before its first check: both
        # refuse, torch for that reason first.
        if torch.check == "pad.range" and min(case.pad) < -(2**62):
            assert kernel.verdict == "reject", case.dumps()
            continue
        assert kernel.describe() == torch.describe(), case.dumps()
    assert compared > 1000


def test_the_valid_cases_are_valid_everywhere():
    for case in valid_cases():
        outcomes = {model.run(case, r).outcome.describe() for r in ("legacy", "current")}
        assert outcomes == {check_path(case).describe()}, case.dumps()


def _torch_can_compute(case) -> bool:
    """Small enough to allocate: the input, and out as torch would size it."""
    sizes = list(case.input.sizes)
    pairs = case.pad[: 2 * len(sizes)]
    for i in range(len(pairs) // 2):
        sizes[-1 - i] += pairs[2 * i] + pairs[2 * i + 1]
    return case.input.numel <= 4096 and math.prod(max(s, 0) for s in sizes) <= 1 << 16


@pytest.mark.parametrize(
    "cases", [300, pytest.param(2000, marks=pytest.mark.slow)], ids=["300", "2000"]
)
def test_the_check_path_is_real_torch(cases):
    torch_checks = pytest.importorskip("convcheck.ops.constant_pad_nd.torch_checks")
    pytest.importorskip("torch")
    src = RandomSource(3)
    compared = 0
    for _ in range(cases):
        case = build_case(src)
        if not _torch_can_compute(case):
            continue
        compared += 1
        real = torch_checks.real_outcome(case)
        assert check_path(case).describe() == real.describe(), case.dumps()
    assert compared > cases * 3 // 4


@pytest.mark.slow
def test_current_is_proven():
    pytest.importorskip("z3")
    from convcheck.solver import prove
    from convcheck.solver.explore import default_ranks, shapes
    from convcheck.solver.symbolic import PROVEN

    only = shapes("current", default_ranks("current", "constant_pad_nd"), "constant_pad_nd")
    report = prove("current", only=only, jobs=1, op="constant_pad_nd")
    assert report.complete
    assert report.sites and all(site.status == PROVEN for site in report.sites)


def test_an_unknown_torch_message_is_kept_not_guessed():
    assert normalize("something new\nmore") == "torch.unknown: something new"
