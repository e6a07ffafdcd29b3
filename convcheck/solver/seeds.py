"""The solver's cases that the default engine judges before it samples.

Cheaper than ``prove`` and ``band_cases``: one exploration of the shapes the op names for
it (``Op.seed_shapes``: a few that together meet every site), each site's first witness
as the path found it (not minimised: the shrinker minimises what the judges find), and
the band cases of the 32-bit edges found without ``Optimize``. The answer is cached on
disk (``solver.cache``) and solved whole, never to a clock: ``convcheck build`` and a
campaign's set-up solve it (``engines.solver.solve_ahead``), so a campaign only reads it.
"""

from __future__ import annotations

from convcheck import registry
from convcheck.case import Case
from convcheck.solver import cache, limits
from convcheck.solver.bands import NARROW_EDGES, path_bands
from convcheck.solver.explore import explore
from convcheck.solver.symbolic import WITNESS


def name(revision: str, op: str = registry.DEFAULT_OP) -> str:
    """The seeds' entry in the solver cache."""
    return f"seeds-{revision}" if op == registry.DEFAULT_OP else f"seeds-{op}-{revision}"


def seed_cases(revision: str, stopped=lambda: False, op: str = registry.DEFAULT_OP) -> list[Case]:
    """The witnesses, then the band cases: from the disk cache, else solved whole (unless
    ``stopped()``: a signal must not wait for the solver, and that answer is not stored)."""
    # The cache is keyed by convcheck's sources: an op of another package is solved anew.
    outside = not type(registry.get(op)).__module__.startswith("convcheck.")
    return cache.solved(
        name(revision, op),
        lambda: solve(revision, stopped, op),
        lambda cases: [c.to_json() for c in cases],
        lambda data: [registry.case_from_json(c, op) for c in data],
        fresh=outside,
    )


def solve(revision: str, stopped=lambda: False, op: str = registry.DEFAULT_OP):
    """The cases, and whether the solving finished (not stopped)."""
    witnessed: set[tuple[str, str]] = set()
    solved: set[tuple[str, int]] = set()
    witnesses: list[Case] = []
    bands: list[Case] = []
    for shape in registry.get(op).seed_shapes(revision):
        for path in explore(revision, shape, limits.CHEAP):
            if stopped():
                return witnesses + bands, False
            for q in path.queries:
                if q.status == WITNESS and (q.site, q.kind) not in witnessed:
                    witnessed.add((q.site, q.kind))
                    witnesses.append(path.inputs.concrete_case(q.witness))
            bands += path_bands(path, solved, limits.CHEAP, NARROW_EDGES, minimise=False)
    return witnesses + bands, True
