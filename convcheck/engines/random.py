"""The random engine, the default: the solver's cases first, then seeded bulk generation.

Sampling is the fastest way through the case space, but a value band only a narrowed
multiply trips on (13 cases per million for ``groups * w.size(1)`` in int32) waits for
luck. So the engine first judges the solver's witnesses and width-band cases
(``convcheck.solver.seeds``, cached on disk) when z3 is installed, then samples.
"""

from __future__ import annotations

import importlib.util
import time

from convcheck.generate import RandomSource, build_case

BATCH = 256
# Of a time budget, solving may take this share; the rest is sampling.
SOLVING_SHARE = 0.25


def explore(campaign, seed: int, solved: bool = True) -> None:
    if solved and importlib.util.find_spec("z3") is not None:
        from convcheck.solver.seeds import seed_cases

        deadline = campaign.deadline
        seconds = None if deadline is None else (deadline - time.monotonic()) * SOLVING_SHARE
        judges = campaign.judges
        submit_all(campaign, seed_cases(judges.revision, seconds, lambda: judges.stopped))
    src = RandomSource(seed)
    while not campaign.exhausted:
        campaign.submit([build_case(src) for _ in range(campaign.room(BATCH))])


def submit_all(campaign, cases: list) -> None:
    """Judge ``cases`` in order, in batches the budget has room for."""
    while cases and not campaign.exhausted:
        n = campaign.room(BATCH)
        campaign.submit(cases[:n])
        cases = cases[n:]
