"""The random engine's rare family: empty inputs whose strides pass int32."""

import random
from itertools import islice

from convcheck import generate, model
from convcheck.generate import RandomSource
from convcheck.judges import is_small
from convcheck.ops.convolution.generate import build_case, empty_input_with_strides_past_int32


def test_the_family_overflows_the_loops_strides_on_a_case_small_enough_to_run():
    src = RandomSource(3)
    for _ in range(200):
        case = empty_input_with_strides_past_int32(src)
        run = model.run(case, "legacy")
        assert run.outcome.verdict == "accept" and 0 not in run.outcome.out_sizes, case.dumps()
        assert is_small(case), case.dumps()
        crash = model.predict(run, with_loops=True)
        assert crash.crash_site.startswith("wrapper_strides.input.dim"), case.dumps()
        assert model.predict(run, with_loops=False) == run.outcome


def test_the_random_engine_replaces_a_few_cases_and_keeps_the_others():
    src = RandomSource(7)
    pairs = [(case, build_case(src)) for case in islice(generate.stream(7), 2048)]
    replaced = [case for case, main in pairs if case != main]
    assert 0 < len(replaced) < 2048 // 64
    assert all(c.transposed and c.input.numel == 0 for c in replaced)


def test_a_seed_draws_what_random_draws_for_it():
    """A seed's cases do not change with the engine's speed: ``RandomSource`` takes the
    same values from the stream as ``random.Random``'s ``randint``, ``choice`` and
    ``random`` do, over ranges of every width the generator uses and wider."""
    for seed in range(20):
        ours, theirs = RandomSource(seed), random.Random(seed)
        for i in range(500):
            low = (i % 7) - 3
            high = low + (0, 1, 2, 5, 19, 2**31, 2**64)[i % 7]
            assert ours.integer(low, high) == theirs.randint(low, high)
            options = tuple(range(i % 11 + 1))
            assert ours.choice(options) == theirs.choice(options)
            assert ours.chance(0.5) == (theirs.random() < 0.5)
