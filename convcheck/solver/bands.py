"""Width bands: calls whose exact intermediate values sit just past a C width's edge.

For each multiply, add, subtract and narrowing the model does, on a path that passes the
checks before it, the solver picks inputs whose *exact* value lies just past INT32_MAX,
UINT32_MAX or INT64_MAX, or just below 0 or INT32_MIN. The model at its own widths may
be fine there; a kernel that does the same arithmetic in a narrower type (a user's, or
ExecuTorch's ``int32_t`` products) is not, and the differential judges see it.
"""

from __future__ import annotations

import z3

from convcheck.case import Case
from convcheck.fixedint import INT32_MAX, INT32_MIN, INT64_MAX
from convcheck.solver import limits
from convcheck.solver.explore import PathResult, Shape, explore, shapes
from convcheck.solver.prove import objectives

# (edge, direction): the band is [edge, edge + SPAN] above, [edge - SPAN, edge] below.
EDGES = ((INT32_MAX + 1, 1), (2**32, 1), (INT64_MAX + 1, 1), (-1, -1), (INT32_MIN - 1, -1))
# The edges a 32-bit kernel trips on: past int64, prove's witnesses are the cases.
NARROW_EDGES = tuple(e for e in EDGES if abs(e[0]) <= 2**32)
SPAN = 2**8
_BANDED = ("add", "sub", "mul", "narrow", "convert")


def _nearest(inputs, query, edge, low, high, rlimit, minimise) -> z3.ModelRef | None:
    """The value on the edge (else in the band), every other size 1 or 0 where it can be.

    On the edge and small is what a narrowing kernel trips on: a product of 2^32 whose
    int32 value is 0, compared with a size of 0, passes a kernel that computes it in int32
    where the model rejects. Without ``minimise``, sizes of at most 3 stand in for
    ``Optimize`` (a tenth of its time): the int64 arguments still reach every edge.
    """
    small = [s <= 3 for terms in inputs.sizes.values() for s in terms]
    for band in (query.exact == edge, z3.And(query.exact >= low, query.exact <= high)):
        if minimise:
            opt = limits.optimizer(rlimit)
            opt.add(*inputs.domain, *query.decisions, band)
            for objective in objectives(inputs):
                opt.minimize(objective)
            if opt.check() == z3.sat:
                return opt.model()
        # Optimize ran out of steps, or is not wanted: any input in the band will do.
        for bound in (small, []) if not minimise else ([],):
            solver = limits.solver(rlimit)
            solver.add(*inputs.domain, *query.decisions, band, *bound)
            if solver.check() == z3.sat:
                return solver.model()
    return None


def path_bands(
    path: PathResult,
    solved: set[tuple[str, int]],
    rlimit: int,
    edges=EDGES,
    minimise: bool = True,
) -> list[Case]:
    """The band cases of one explored path, for the (site, edge) pairs not ``solved`` yet."""
    cases: list[Case] = []
    for q in path.queries:
        if q.op not in _BANDED or q.exact is None:
            continue
        for edge, direction in edges:
            if (q.site, edge) in solved:
                continue
            low, high = (edge, edge + SPAN) if direction > 0 else (edge - SPAN, edge)
            found = _nearest(path.inputs, q, edge, low, high, rlimit, minimise)
            if found is not None:
                solved.add((q.site, edge))
                cases.append(path.inputs.concrete_case(found))
    return cases


def band_cases(
    revision: str, only: list[Shape] | None = None, rlimit: int = limits.CHEAP
) -> list[Case]:
    """One call per (site, edge) the solver can reach, simplest shapes first."""
    solved: set[tuple[str, int]] = set()
    cases: list[Case] = []
    for shape in only if only is not None else shapes(revision):
        for path in explore(revision, shape, rlimit):
            cases += path_bands(path, solved, rlimit)
    return cases
