"""The random engine: seeded bulk generation, the fastest way through the case space."""

from __future__ import annotations

from convcheck.generate import RandomSource, build_case, empty_input_with_strides_past_int32

BATCH = 256
# How often a case of ``build_case`` gives way to one of a family it almost never makes.
RARE = 1 / 256


def explore(campaign, seed: int) -> None:
    src = RandomSource(seed)
    # A stream of its own: every case of the main stream stays the same (some are replaced).
    rare = RandomSource(-1 - seed)
    while not campaign.exhausted:
        cases = [build_case(src) for _ in range(campaign.room(BATCH))]
        campaign.submit(
            [empty_input_with_strides_past_int32(rare) if rare.chance(RARE) else c for c in cases]
        )
