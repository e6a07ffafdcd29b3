"""The random engine: seeded bulk generation, the fastest way through the case space."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice

from convcheck.case import Case
from convcheck.generate import RandomSource, build_case, empty_input_with_strides_past_int32

BATCH = 256
# How often a case of ``build_case`` gives way to one of a family it almost never makes.
RARE = 1 / 256


def cases(seed: int) -> Iterator[Case]:
    src = RandomSource(seed)
    # A stream of its own: every case of the main stream stays the same (some are replaced).
    rare = RandomSource(-1 - seed)
    while True:
        case = build_case(src)
        yield empty_input_with_strides_past_int32(rare) if rare.chance(RARE) else case


def explore(campaign, seed: int) -> None:
    stream = cases(seed)
    while not campaign.exhausted:
        campaign.submit(list(islice(stream, campaign.batch(BATCH))))
