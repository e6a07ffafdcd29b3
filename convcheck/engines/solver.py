"""The solver as a campaign engine: witnesses and band cases first, then sampling.

First the default engine's solved cases (``solver.seeds``: each site's first witness and
its 32-bit bands), then every site's minimised witness and band cases, then the op's own
solved cases (``Op.solver_cases``: what the op asks the solver beyond its sites), then
sampling.

``explore(campaign, seed)`` has the shape of every engine in ``convcheck.engines``. The
site solving is of the shapes of the op's least default rank. Every solved case is
solved whole, never to a clock, and cached on disk (``solver.cache``) by
``solve_ahead``, which ``convcheck build``, ``convcheck target`` and a campaign's set-up
call before any budget starts: the campaign reads them, so a seed gives the same
campaign anywhere, from a cold cache or a warm one, under a case or a time budget.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TextIO

from convcheck import registry
from convcheck.engines import random as random_engine
from convcheck.solver import cache, seeds
from convcheck.solver.bands import band_cases
from convcheck.solver.explore import default_ranks, shapes
from convcheck.solver.prove import solved_report
from convcheck.solver.seeds import seed_cases

if TYPE_CHECKING:
    from convcheck.campaign import Campaign

# What each engine that judges solved cases needs solved (the others need nothing).
_NEEDS = {"random": ("seeds",), "solver": ("seeds", "engine")}


def solved_shapes(revision: str, op: str = registry.DEFAULT_OP) -> list:
    """The shapes whose sites the engine's witnesses and band cases come from."""
    rank = min(default_ranks(revision, op))
    return [s for s in shapes(revision, op=op) if s.rank == rank]


def solver_cases(revision: str, only=None) -> list:
    """Every witness, then every band case."""
    ordered = only or solved_shapes(revision)
    report = solved_report(revision, ordered)  # the one solve the tests read too
    cases = [s.witness for s in report.sites if s.witness is not None]
    return cases + band_cases(revision, ordered)


def _name(revision: str) -> str:
    return f"engine-{revision}"


@functools.cache
def _solved(revision: str) -> tuple:
    """The answer depends on the revision alone: solved once per version of the code on
    a machine (a minute on legacy), then read from the disk."""
    return cache.solved(
        _name(revision),
        lambda: ([*solver_cases(revision), *registry.get().solver_cases(revision)], True),
        lambda cases: [c.to_json() for c in cases],
        lambda data: tuple(registry.case_from_json(c) for c in data),
    )


def first_cases(revision: str) -> list:
    """What the engine judges before it samples."""
    return seed_cases(revision) + list(_solved(revision))


def solve_ahead(engines: list[str], revisions: list[str], out: TextIO, always=False) -> None:
    """Solve and cache what the ``engines`` judge first on ``revisions`` and is not
    cached yet, saying so on ``out`` (with ``always``, also what was): before a campaign's
    budget starts, so that its time is all judging, and so that it judges the same
    solved cases whether the cache was cold or warm."""
    entries: dict[str, tuple[Callable[[str], str], Callable[[str], Sequence]]] = {
        "seeds": (seeds.name, seed_cases),
        "engine": (_name, _solved),
    }
    needed = dict.fromkeys(n for e in engines for n in _NEEDS.get(e, ()))
    for revision in revisions:
        for what in needed:
            name, solve = entries[what]
            if not cache.cold(name(revision)):
                if always:
                    out.write(f"{revision:<8} solved    {cache.path(name(revision))} (cached)\n")
                continue
            out.write(f"{revision:<8} solving   the {what} cases, once for this version...\n")
            out.flush()
            started = time.monotonic()
            cases = solve(revision)
            took = time.monotonic() - started
            out.write(
                f"{revision:<8} solved    {cache.path(name(revision))} "
                f"({len(cases)} cases, {took:.1f} s)\n"
            )


def explore(campaign: Campaign, seed: int) -> None:
    # The solved cases first: read from the cache (solved ahead of the budget when the
    # command did its set-up; else solved whole here, the same answer).
    judges = campaign.judges
    random_engine.submit_all(campaign, seed_cases(judges.revision, lambda: judges.stopped))
    if not campaign.exhausted:
        random_engine.submit_all(campaign, list(_solved(judges.revision)))
    # Its own cases include the default engine's, minimised: sampling alone is left.
    random_engine.explore(campaign, seed, solved=False)
