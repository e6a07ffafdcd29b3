"""``max_pool2d_with_indices_backward``: the model of both revisions, with index values.

The issue's reproducers by hand; a seeded campaign of the model alone finds every class
whose signature is the model's (overflow, ordering), one report row each, and nothing on
``current``; the classes that live in the loops (the indices over-read, an index outside
grad_input) are the model's prediction of the sanitized kernel, and generation reaches
them on ``legacy`` and never on ``current``.
"""

import pytest
from model_campaign import campaign, classes, predicted_crashes

from convcheck import model, registry
from convcheck.case import TensorSpec
from convcheck.generate import RandomSource
from convcheck.ops.max_pool2d_with_indices_backward.case import MaxPoolBackwardCase
from convcheck.ops.max_pool2d_with_indices_backward.differences import INTENTIONAL
from convcheck.ops.max_pool2d_with_indices_backward.generate import build_case
from convcheck.ops.max_pool2d_with_indices_backward.known_bugs import LEGACY_BUG_CLASSES
from convcheck.ops.max_pool2d_with_indices_backward.torch_checks import (
    TORCH_OVERFLOW,
    check_path,
    real_outcome,
)

OP = registry.get("max_pool2d_with_indices_backward")


def backward(
    grad_output=(1, 1, 2, 2),
    indices=None,
    fill=0,
    at=None,
    value=0,
    kernel=(2,),
    stride=(),
    dilation=(1,),
    input=(1, 1, 4, 4),
    dtype="float32",
):
    return MaxPoolBackwardCase(
        TensorSpec(grad_output, dtype),
        TensorSpec(input, dtype),
        kernel,
        stride,
        (0,),
        dilation,
        False,
        TensorSpec(indices or grad_output, "int64"),
        TensorSpec((1,) * len(input), dtype),
        fill,
        at,
        value,
    )


def sanitized(case, revision):
    """What a sanitized kernel of ``revision`` answers, by the model (with the loops)."""
    return model.predict(model.run(case, revision), with_loops=True).describe()


def test_it_is_registered_and_reads_its_json():
    case = backward(at=3, value=-5)
    assert registry.op_of(case) is OP
    assert registry.loads_case(case.dumps(), op="max_pool2d_with_indices_backward") == case


@pytest.mark.parametrize(
    "case, legacy, current",
    [
        (backward(), "accept [1, 1, 4, 4]", "accept [1, 1, 4, 4]"),
        (backward(fill=-1), "accept [1, 1, 4, 4]", "accept [1, 1, 4, 4]"),
        (backward(at=3, value=15), "accept [1, 1, 4, 4]", "accept [1, 1, 4, 4]"),
        # The issue's: indices [1,1,1,1] beside grad_output [1,1,2,2] (:125), index values
        # of 1000 and -5 (:128).
        (
            backward(indices=(1, 1, 1, 1)),
            "crash heap-buffer-overflow READ at loops.indices_read",
            "reject indices.sizes",
        ),
        (
            backward(fill=1000),
            "crash heap-buffer-overflow READ at loops.grad_input_access",
            "reject indices.range",
        ),
        (
            backward(at=3, value=-5),
            "crash heap-buffer-overflow READ at loops.grad_input_access",
            "reject indices.range",
        ),
        # One past the plane, still inside the buffer of a later plane: no sanitizer report,
        # a wrong gradient; current refuses it all the same.
        (
            backward((2, 1, 2, 2), input=(2, 1, 4, 4), at=0, value=16),
            "accept [2, 1, 4, 4]",
            "reject indices.range",
        ),
        # Stride and dilation are never checked (kernel_size is checked in their place).
        (
            backward(stride=(0,)),
            "crash division-by-zero at pool_sizes.dim0.div_stride",
            "reject stride.range",
        ),
        (
            backward(kernel=(3,), dilation=(2**62,)),
            "crash signed-integer-overflow at pool_sizes.dim0.dilated_kernel",
            "reject dilation.range",
        ),
        (backward(dtype="int32"), "reject dtype.unsupported", "reject dtype.unsupported"),
    ],
)
def test_each_revision_runs_its_own_steps(case, legacy, current):
    assert sanitized(case, "legacy") == legacy
    assert sanitized(case, "current") == current


def test_the_first_bad_index_is_where_the_loops_meet_it():
    """The over-read happens at grad_output's numel; a bad value before it comes first."""
    case = backward((1, 2, 2, 2), indices=(1, 1, 2, 2), input=(1, 2, 4, 4), fill=-5)
    run = model.run(case, "legacy")
    assert [e.site for e in run.ub] == ["loops.grad_input_access"]
    # In plane 1 of 2, an index of -16 lands on plane 0's first element: in the buffer.
    case = backward((1, 2, 2, 2), input=(1, 2, 4, 4), at=4, value=-16)
    assert sanitized(case, "legacy") == "accept [1, 2, 4, 4]"


def test_a_legacy_campaign_finds_every_class_the_model_sees_one_row_each():
    found = campaign(OP.name, "legacy")
    named = classes(OP.name, found)
    assert set(named.values()) == {
        "stride unchecked",
        "dilation unchecked",
        "output size wraps in size_t",
        "grad_input strides past int32",
    }, named


def test_a_current_campaign_finds_nothing():
    assert campaign(OP.name, "current") == {}


def test_generation_reaches_the_loop_classes_on_legacy_only():
    legacy = predicted_crashes(OP.name, "legacy", seed=4)
    assert legacy >= {
        "indices smaller than grad_output over-read",
        "index value outside grad_input",
    }, legacy
    assert legacy <= set(LEGACY_BUG_CLASSES), legacy
    assert predicted_crashes(OP.name, "current", seed=4) == set()


def _crashes_at(site):
    def keeps(cases):
        predicted = (model.predict(model.run(c, "legacy"), with_loops=True) for c in cases)
        return [o.verdict == "crash" and o.crash_site == site for o in predicted]

    return keeps


def test_the_shrinker_moves_index_values_and_shapes_together():
    from convcheck.shrink import Shrinker

    t = TensorSpec
    big = MaxPoolBackwardCase(
        t((2, 3, 3, 3)), t((2, 3, 6, 6)), (2,), (2,), (1,), (1,), False,
        t((2, 3, 3, 3), "int64"), t((1, 1, 1, 1)), 7, 40, 1000,
    )  # fmt: skip
    small = Shrinker(_crashes_at("loops.grad_input_access")).shrink(big)
    # One element everywhere; its one index one past its one-element plane, as the fill.
    assert small == backward((1, 1, 1, 1), input=(1, 1, 1, 1), kernel=(1,), stride=(1,), fill=1)
    short = big.replace(indices=t((2, 3, 1, 3), "int64"), planted_value=5)
    small = Shrinker(_crashes_at("loops.indices_read")).shrink(short)
    assert small.indices.numel == 1 < small.grad_output.numel <= 2, small
    assert (small.indices_fill, small.planted_at) == (0, None), small


def test_current_and_torch_part_only_where_intended():
    """Both accept with the same sizes or both refuse (for reasons that may come in
    another order); where torch's own int product overflows, its answer is no rule."""
    src = RandomSource(5)
    compared = 0
    for _ in range(2000):
        case = build_case(src)
        kernel, torch = model.run(case, "current").outcome, check_path(case)
        if torch.check == TORCH_OVERFLOW or kernel.check in INTENTIONAL:
            continue
        compared += 1
        assert kernel.verdict == torch.verdict, case.dumps()
        assert kernel.out_sizes == torch.out_sizes, case.dumps()
    assert compared > 1000


def test_legacy_misses_two_checks_torch_makes():
    # A window larger than the padded input: legacy's truncation gives 1 position.
    wide = backward((1, 1, 1, 1), input=(1, 1, 4, 4), kernel=(3,), dilation=(2,))
    # One padding value pads both dims; legacy holds it to the first kernel dim only.
    padded = backward((1, 1, 2, 6), input=(1, 1, 4, 4), kernel=(3, 1)).replace(padding=(1,))
    for case, check in [(wide, "output.invalid"), (padded, "padding.gt_half_kernel")]:
        assert check_path(case).check == check
        assert model.run(case, "current").outcome.check == check
        assert model.run(case, "legacy").outcome.verdict == "accept"
        assert OP.bug_class(("missing-check", check)) in LEGACY_BUG_CLASSES


def _small(case) -> bool:
    """Real torch can make it: small tensors, int64 indices, grad_input in input's dtype
    (real_outcome calls the functional op, whose grad_input is torch's)."""
    tensors = (case.input, case.grad_output, case.indices)
    return max(t.numel for t in tensors) <= 4096 and case.indices.dtype == "int64"


@pytest.mark.parametrize(
    "cases", [300, pytest.param(2000, marks=pytest.mark.slow)], ids=["300", "2000"]
)
def test_the_check_path_is_real_torch(cases):
    pytest.importorskip("torch")
    src = RandomSource(6)
    compared = 0
    while compared < cases:
        case = build_case(src)
        if not _small(case) or check_path(case).check == TORCH_OVERFLOW:
            continue
        compared += 1
        assert check_path(case).describe() == real_outcome(case).describe(), case.dumps()
