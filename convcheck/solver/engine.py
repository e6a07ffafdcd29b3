"""The solver as a campaign engine: witnesses and band cases first, then sampling."""

from __future__ import annotations

import time

from convcheck.solver.bands import band_cases
from convcheck.solver.explore import shapes
from convcheck.solver.prove import prove

# Most of a short campaign goes to solving; 1-D calls first, where witnesses are smallest.
SOLVING_SHARE = 0.6


def solver_cases(revision: str, seconds: float | None = None, only=None) -> list:
    """Every witness, then every band case, found within ``seconds`` (None: all)."""
    started = time.monotonic()
    ordered = sorted(only or shapes(revision), key=lambda s: s.rank)
    report = prove(revision, None if seconds is None else seconds / 2, ordered)
    cases = [s.witness for s in report.sites if s.witness is not None]
    left = None if seconds is None else max(0.0, seconds - (time.monotonic() - started))
    return cases + band_cases(revision, left, ordered)


def solver_engine(campaign, seconds: float, seed: int) -> None:
    """``engine(campaign, seconds, seed)``: solved cases, then ``random_engine``."""
    from convcheck.campaign import random_engine

    started = time.monotonic()
    campaign.submit(solver_cases(campaign.engine.revision, seconds * SOLVING_SHARE))
    left = seconds - (time.monotonic() - started)
    if left > 0:
        random_engine(campaign, left, seed)
