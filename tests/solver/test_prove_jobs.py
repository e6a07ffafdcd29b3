"""``prove`` in worker processes gives the report one process gives."""

import pytest

pytest.importorskip("z3")

from convcheck.solver import prove  # noqa: E402
from convcheck.solver.explore import Shape  # noqa: E402
from convcheck.solver.symbolic import UNKNOWN, WITNESS  # noqa: E402


def shape_of(path: str) -> str:
    return path.split(", branches")[0]


def summary(report):
    """Each site's status and the shape its witness is from, where the solver answered.
    Not the paths themselves, nor what ran out of time: the limits are wall-clock, so a
    busy machine may leave a query unknown (and the paths behind a branch unexplored) in
    one run and not in the other."""
    return {
        (s.site, s.kind): (s.status, shape_of(s.witness_path))
        for s in report.sites
        if s.status != UNKNOWN
    }


def timed_out(report) -> bool:
    return any(s.status == UNKNOWN for s in report.sites)


@pytest.mark.slow  # two legacy shapes solved twice: 20 to 60 s
def test_two_workers_give_the_same_statuses_and_the_simplest_shapes_witnesses():
    # A site witnessed on both shapes keeps the first (regular) shape's witness, whichever
    # worker finishes first.
    only = [Shape(3, False, None), Shape(3, True, None)]
    alone = prove("legacy", only=only, minimise=False, jobs=1)
    side_by_side = prove("legacy", only=only, minimise=False, jobs=2)
    one, two = summary(alone), summary(side_by_side)
    both = one.keys() & two.keys()
    assert {k: one[k] for k in both} == {k: two[k] for k in both}
    # A site only one run has is one the other's time-outs left unexplored.
    assert one.keys() <= two.keys() or timed_out(side_by_side)
    assert two.keys() <= one.keys() or timed_out(alone)
    witnessed = [s for s in alone.sites if s.status == WITNESS]
    assert witnessed
    regular, transposed = (s.describe() for s in only)
    in_both = [
        s
        for s in witnessed
        if {shape_of(p.path) for p in s.paths if p.status == WITNESS} == {regular, transposed}
    ]
    assert in_both and all(shape_of(s.witness_path) == regular for s in in_both)
    assert side_by_side.shapes_done == alone.shapes_done == 2
