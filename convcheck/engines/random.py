"""The random engine: seeded bulk generation, the fastest way through the case space."""

from __future__ import annotations

from convcheck.generate import RandomSource, build_case

BATCH = 256


def explore(campaign, seed: int) -> None:
    src = RandomSource(seed)
    while not campaign.exhausted:
        campaign.submit([build_case(src) for _ in range(campaign.batch(BATCH))])
