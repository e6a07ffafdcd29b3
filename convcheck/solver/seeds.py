"""The solver's cases that the default engine judges before it samples.

Cheaper than ``prove`` and ``band_cases``: one exploration of three rank-3 shapes (a
regular call with a float32 bias meets every site a regular call meets; a transposed bias
caps ``groups * w.size(1)`` at its int32 length, so the transposed call goes without one
too; a bool bias is refused before any arithmetic), each site's first witness as the
path found it (not minimised: the shrinker minimises what the judges find), and the band
cases of the 32-bit edges found without ``Optimize``. The answer is cached on disk
(``solver.cache``); within a time budget the solving stops at its share, and a partial
answer is not cached.
"""

from __future__ import annotations

import time

from convcheck import ops
from convcheck.case import Case
from convcheck.ops.convolution.solving import ConvolutionShape as Shape
from convcheck.solver import cache, limits
from convcheck.solver.bands import NARROW_EDGES, path_bands
from convcheck.solver.explore import default_ranks, explore, shapes
from convcheck.solver.symbolic import WITNESS

SHAPES = (Shape(3, False, "float32"), Shape(3, True, "float32"), Shape(3, True, None))


def seed_cases(
    revision: str, seconds: float | None = None, stopped=lambda: False, op: str = ops.DEFAULT_OP
) -> list[Case]:
    """The witnesses, then the band cases: from the disk cache, else solved (until
    ``seconds`` or until ``stopped()``: a signal must not wait for the solver)."""
    name = f"seeds-{revision}" if op == ops.DEFAULT_OP else f"seeds-{op}-{revision}"
    # The cache is keyed by convcheck's sources: an op of another package is solved anew.
    outside = not type(ops.get(op)).__module__.startswith("convcheck.")
    return cache.solved(
        name,
        lambda: solve(revision, seconds, stopped, op),
        lambda cases: [c.to_json() for c in cases],
        lambda data: [Case.from_json(c, op) for c in data],
        fresh=outside,
    )


def seed_shapes(revision: str, op: str = ops.DEFAULT_OP) -> list:
    """The default op's three shapes; another op's shapes of the ranks it is proven in."""
    if op == ops.DEFAULT_OP:
        return list(SHAPES)
    return shapes(revision, default_ranks(revision, op), op)


def solve(revision: str, seconds: float | None = None, stopped=lambda: False, op=ops.DEFAULT_OP):
    """The cases, and whether the solving finished (within ``seconds``, not stopped)."""
    started = time.monotonic()
    witnessed: set[tuple[str, str]] = set()
    solved: set[tuple[str, int]] = set()
    witnesses: list[Case] = []
    bands: list[Case] = []
    for shape in seed_shapes(revision, op):
        for path in explore(revision, shape, limits.CHEAP):
            if stopped() or seconds is not None and time.monotonic() - started > seconds:
                return witnesses + bands, False
            for q in path.queries:
                if q.status == WITNESS and (q.site, q.kind) not in witnessed:
                    witnessed.add((q.site, q.kind))
                    witnesses.append(path.inputs.concrete_case(q.witness))
            bands += path_bands(path, solved, limits.CHEAP, NARROW_EDGES, minimise=False)
    return witnesses + bands, True
