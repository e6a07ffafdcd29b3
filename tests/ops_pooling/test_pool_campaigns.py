"""Campaigns on the pooling ops: the random engine builds their calls, the model and
exact arithmetic judge them, and where asked our C kernel and torch's check path; the
shrinker minimises each finding. legacy's classes that the model sees alone (an ordering
or an overflow in the checks and the output-size arithmetic), and with the kernel and
torch those it parts from torch by, are all found, each finding names its class, and
current finds nothing of the kernel's."""

import pytest

from convcheck import engines, registry
from convcheck.campaign import Budget, Campaign
from convcheck.judges import Judges

# What the model alone sees of each op's legacy classes (the others need the kernel's
# loops, its values, or torch: known_bugs.py says which).
MODEL_VISIBLE = {
    "avg_pool2d": {
        "stride 0 divides by zero",
        "unchecked stride overflows the output size",
        "output size wraps (size_t arithmetic, the int32 size type)",
        "strides past int32",
    },
    "max_pool2d_with_indices": {
        "stride 0 divides by zero",
        "unchecked stride overflows the output size",
        "output size wraps (size_t arithmetic, the int32 size type)",
        "strides past int32",
        "unchecked dilation overflows the output size",
    },
}


# What torch's check path adds: the calls legacy answers otherwise than torch.
TORCH_VISIBLE = {
    "negative stride, or a stride list of any length, accepted",
    "kernel larger than the input accepted",
    "one padding value checked against one kernel dim",
    "window values past int32 accepted",
}
OWN_TORCH_VISIBLE = {
    "avg_pool2d": {"channels-last input refused"},
    "max_pool2d_with_indices": {"dilation 0, negative, or a list of any length, accepted"},
}
# What our kernel's run entry adds: its loops halting where they would spin, the padded
# window's area overflowing in them, and avg's int64 arithmetic on extreme values.
RUN_VISIBLE = {
    "avg_pool2d": {
        "the loops visit every tap (work past limit)",
        "padded window's area overflows",
        "int64 window sum overflows",
        "INT64_MIN / -1 with divisor_override",
    },
    "max_pool2d_with_indices": {"the loops visit every tap (work past limit)"},
}


def campaign(op, revision, cases, seed=1, torch=False):
    """The model alone, or with torch the full pipeline (our C kernel, torch)."""
    with Judges(revision, op=op, use_native=torch, use_torch=torch) as judges:
        run = Campaign(judges, budget=Budget(cases=cases))
        run.explore(engines.load("random"), seed)
        run.minimize_all()
        return list(run.found.values())


@pytest.mark.parametrize("op", sorted(MODEL_VISIBLE))
def test_legacy_finds_every_model_visible_class(op):
    found = campaign(op, "legacy", 6000)
    classes = {f.key: registry.get(op).bug_class(f.signature) for f in found}
    assert None not in classes.values(), classes
    assert set(classes.values()) == MODEL_VISIBLE[op], classes


@pytest.mark.parametrize("op", sorted(MODEL_VISIBLE))
def test_current_finds_nothing(op):
    assert campaign(op, "current", 6000) == []


@pytest.mark.parametrize("op", sorted(MODEL_VISIBLE))
def test_legacy_against_torch_finds_where_it_parts_from_torch(op):
    found = [f for f in campaign(op, "legacy", 6000, torch=True) if f.about_kernel]
    classes = {f.key: registry.get(op).bug_class(f.signature) for f in found}
    assert None not in classes.values(), classes
    expected = MODEL_VISIBLE[op] | TORCH_VISIBLE | OWN_TORCH_VISIBLE[op] | RUN_VISIBLE[op]
    assert set(classes.values()) == expected, classes


@pytest.mark.parametrize("op", sorted(MODEL_VISIBLE))
def test_current_against_torch_finds_only_torchs_own_bugs(op):
    """ATen's output size wraps past 2^31 (``torch_judge``): torch's bug, not the
    kernel's, which refuses those calls."""
    found = campaign(op, "current", 6000, torch=True)
    assert [f.key for f in found if f.about_kernel] == []


def test_stride_0_shrinks_to_the_call_a_person_writes():
    found = campaign("max_pool2d_with_indices", "legacy", 6000)
    [divided] = [f.case for f in found if f.key == "ordering | output_sizes.dim*.div_stride"]
    # A stride of 0 in one dim, beside a dim whose window (2 on an input of 1) the output
    # check refuses; every size 1.
    assert set(divided.input.sizes) == {1}, divided
    assert divided.kernel_size == (2,) and sorted(divided.stride) == [0, 1], divided
