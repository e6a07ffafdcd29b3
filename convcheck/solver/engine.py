"""The solver as a campaign engine: witnesses and band cases first, then sampling.

First the default engine's solved cases (``solver.seeds``: each site's first witness and
its 32-bit bands, cached on disk), then every site's minimised witness and band cases.

``explore(campaign, seed)`` has the shape of every engine in ``convcheck.engines``. The
solving is of the 1-D calls only. With a time budget the minimised witnesses are left
out (solving them overruns the budget); with a case budget alone the solving has no time
limit, so a case budget with a seed gives the same campaign anywhere.
"""

from __future__ import annotations

import functools
import time

from convcheck.engines import random as random_engine
from convcheck.solver.bands import band_cases
from convcheck.solver.explore import shapes
from convcheck.solver.prove import prove
from convcheck.solver.seeds import seed_cases

SOLVED_RANK = 3


def solver_cases(revision: str, seconds: float | None = None, only=None) -> list:
    """Every witness, then every band case (within ``seconds`` when given)."""
    ordered = only or [s for s in shapes(revision) if s.rank == SOLVED_RANK]
    report = prove(revision, None if seconds is None else seconds / 2, ordered)
    cases = [s.witness for s in report.sites if s.witness is not None]
    return cases + band_cases(revision, None if seconds is None else seconds / 2, ordered)


@functools.cache
def _solved(revision: str) -> tuple:
    """Solved without a time limit, the answer depends on the revision alone: solve it
    once per process (a campaign per engine in ``ci``, the tests' repeated campaigns)."""
    return tuple(solver_cases(revision))


def explore(campaign, seed: int) -> None:
    # The default engine's solved cases first (cached: judged within the first second).
    judges, deadline = campaign.judges, campaign.deadline
    share = None if deadline is None else max(0.0, deadline - time.monotonic()) / 4
    random_engine.submit_all(campaign, seed_cases(judges.revision, share, lambda: judges.stopped))
    # The minimised witnesses only on a case budget: ``prove`` overruns a time limit (a
    # 15 s campaign took 47 s on legacy), and a campaign must end when its time is up.
    if deadline is None and not campaign.exhausted:
        random_engine.submit_all(campaign, list(_solved(judges.revision)))
    # Its own cases include the default engine's, minimised: sampling alone is left.
    random_engine.explore(campaign, seed, solved=False)
