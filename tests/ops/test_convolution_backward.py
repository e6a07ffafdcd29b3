"""``convolution_backward``: the model of both revisions. Its own checks first, then
convolution's, run as convolution's own steps.

The issue's reproducers by hand; a seeded campaign of the model alone finds every class
whose signature is the model's, one report row each, and nothing on ``current``; the
grad_bias writes live in the loops and are the model's prediction of a sanitized kernel.
"""

import pytest
from model_campaign import campaign, classes, predicted_crashes

from convcheck import model, registry
from convcheck.case import TensorSpec
from convcheck.ops.convolution import legacy as convolution
from convcheck.ops.convolution_backward.case import ConvolutionBackwardCase

OP = registry.get("convolution_backward")


def backward(weight=(2, 1, 2, 2), bias=(2,), given=True, grad_bias=(2,), mask=(1, 1, 1), **kw):
    t = TensorSpec
    args = {"groups": 1, "padding": (0,), "dilation": (1,), "input": (1, 1, 3, 3)}
    args.update(kw)
    n, _, h, w = args["input"]
    k = weight[2]
    out = (n, weight[0], h - k + 1, w - k + 1)
    return ConvolutionBackwardCase(
        t(args.get("grad_output", out)), t(args["input"]), t(weight), bias, given, (1,),
        args["padding"], args["dilation"], False, (0,), args["groups"], mask,
        t((1, 1, 1, 1)), t((1, 1, 1, 1)), t(grad_bias),
    )  # fmt: skip


def sanitized(case, revision):
    return model.predict(model.run(case, revision), with_loops=True).describe()


def test_it_is_registered_and_reads_its_json():
    case = backward(mask=(1,))
    assert registry.op_of(case) is OP
    assert registry.loads_case(case.dumps(), op="convolution_backward") == case


def test_convolutions_steps_are_run_not_copied():
    steps = {step.__name__: step for step in OP.revisions["legacy"].steps}
    theirs = {step.__name__: step for step in convolution.STEPS}
    for name in ("dtypes", "ranks", "stride", "padding", "groups", "channels", "output_sizes"):
        assert steps[name] is theirs[name], name


@pytest.mark.parametrize(
    "case, legacy, current",
    [
        (backward(), "accept [1, 2, 2, 2]", "accept [1, 2, 2, 2]"),
        # The issue's: bias_sizes [1] (or none beside a [1] grad_bias) with 2 channels.
        (
            backward(bias=(1,)),
            "crash heap-buffer-overflow READ at loops.grad_bias",
            "accept [1, 2, 2, 2]",
        ),
        (
            backward(given=False, grad_bias=(1,)),
            "crash heap-buffer-overflow READ at loops.grad_bias",
            "accept [1, 2, 2, 2]",
        ),
        # Not requested: nothing is written.
        (backward(bias=(1,), mask=(1, 1, 0)), "accept [1, 2, 2, 2]", "accept [1, 2, 2, 2]"),
        # An output_mask of length 1: its second entry is read all the same.
        (
            backward(mask=(1,)),
            "crash heap-buffer-overflow READ at output_mask.read",
            "reject output_mask.length",
        ),
        # Convolution's classes, through convolution's steps.
        (
            backward(groups=0),
            "crash division-by-zero at groups.weight0_rem",
            "reject groups.nonpos",
        ),
        (
            backward(padding=(2**62,)),
            "crash signed-integer-overflow at output_sizes.dim0.two_pad",
            "reject padding.range",
        ),
        (
            backward(weight=(2, 1, 3, 3), dilation=(2**62,)),
            "crash signed-integer-overflow at output_sizes.dim0.dilated_kernel",
            "reject dilation.range",
        ),
    ],
)
def test_each_revision_runs_its_own_steps(case, legacy, current):
    assert sanitized(case, "legacy") == legacy
    assert sanitized(case, "current") == current


def test_a_legacy_campaign_finds_every_class_the_model_sees_one_row_each():
    named = classes(OP.name, campaign(OP.name, "legacy"))
    assert set(named.values()) == {
        "output_mask read past its length",
        "groups = 0",
        "unbounded padding",
        "unbounded dilation",
        "output size past 32 bits",
        "output size wraps in size_t",
        "gradient strides past int32",
    }, named


def test_a_current_campaign_finds_nothing():
    assert campaign(OP.name, "current") == {}


def test_generation_reaches_the_grad_bias_class_on_legacy_only():
    legacy = predicted_crashes(OP.name, "legacy", seed=7)
    assert "grad_bias shorter than the output channels" in legacy, legacy
    assert None not in legacy
    assert predicted_crashes(OP.name, "current", seed=7) == set()
