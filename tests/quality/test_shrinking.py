"""Quality: the sanitized kernel's crash on the groups overflow shrinks to the case a
person would write, within the campaign's budget of calls (issue 16)."""

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
