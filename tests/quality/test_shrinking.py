"""Quality: the sanitized kernel's crash on the groups overflow shrinks to the case a
person would write, within the campaign's budget of calls (issue 16)."""

import time

from builders import groups_overflow, groups_overflow_by_hand

from convcheck.judges import Judges
from convcheck.shrink import Shrinker


def test_the_native_groups_overflow_crash_shrinks_to_hand_minimal():
    with Judges("legacy", jobs=1, use_torch=False) as judges:
        crashes = [f for f in judges.evaluate([groups_overflow()])[0] if f.kind == "crash"]
        assert [f.signature[1:] for f in crashes] == [
            ("signed-integer-overflow", "bias_shape.groups_mul")
        ]
        signature = crashes[0].signature

        shrinker = Shrinker(
            judges.keeps(signature), max_evaluations=600
        )  # minimize_all's default; no clock
        small = shrinker.shrink(groups_overflow())
        assert small == groups_overflow_by_hand()
        # Before find_integer: all 600 calls spent (541 on groups), weight [6, 4, 3] left.
        assert shrinker.evaluations <= 200
        assert signature in {f.signature for f in judges.evaluate([small])[0]}


def test_shrinking_on_the_prediction_reaches_the_same_case_with_few_kernel_calls():
    """The model foresees this crash: only the candidates it says still crash go to the
    sanitized kernel, and the shrink ends at the same case as judging every one."""
    with Judges("legacy", jobs=1, use_torch=False) as judges:
        found = judges.evaluate([groups_overflow()])[0]
        signature = next(f.signature for f in found if f.kind == "crash")
        keeper = judges.keeps(signature, groups_overflow())
        assert keeper.foreseen
        shrinker = Shrinker(keeper, max_evaluations=600)
        small = shrinker.shrink(groups_overflow())
        assert small == groups_overflow_by_hand()
        # Every kept candidate was confirmed on the kernel; most candidates never reached it.
        assert keeper.found[small].signature == signature
        assert keeper.confirmed * 3 < shrinker.evaluations, (keeper.confirmed, shrinker.evaluations)


def test_a_candidate_past_the_deadline_is_not_kept():
    """The per-finding deadline reaches the judges: a candidate they could not finish
    in time counts as lost, whatever the prediction says."""
    with Judges("legacy", jobs=1, use_torch=False) as judges:
        found = judges.evaluate([groups_overflow()])[0]
        signature = next(f.signature for f in found if f.kind == "crash")
        on_time = judges.keeps(signature, groups_overflow())
        late = judges.keeps(signature, groups_overflow(), deadline=time.monotonic() - 1)
        assert on_time([groups_overflow()]) == [True]
        assert late([groups_overflow()]) == [False]
