"""Model-only campaigns on the pooling ops: the random engine builds their calls, the
model and exact arithmetic judge them (no C kernel, no torch: the ops have none yet),
the shrinker minimises each finding. legacy's classes that the model sees alone (an
ordering or an overflow in the checks and the output-size arithmetic) are all found,
each finding names its class, and current finds nothing."""

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


def campaign(op, revision, cases, seed=1):
    with Judges(revision, op=op, use_native=False, use_torch=False) as judges:
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


def test_stride_0_shrinks_to_the_call_a_person_writes():
    found = campaign("max_pool2d_with_indices", "legacy", 6000)
    [divided] = [f.case for f in found if f.key == "ordering | output_sizes.dim*.div_stride"]
    # A stride of 0 in one dim, beside a dim whose window (2 on an input of 1) the output
    # check refuses; every size 1.
    assert set(divided.input.sizes) == {1}, divided
    assert divided.kernel_size == (2,) and sorted(divided.stride) == [0, 1], divided
