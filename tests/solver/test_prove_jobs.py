"""``prove`` in worker processes gives the report one process gives."""

import pytest

pytest.importorskip("z3")

from convcheck.solver import prove  # noqa: E402
from convcheck.solver.explore import Shape  # noqa: E402
from convcheck.solver.symbolic import WITNESS  # noqa: E402


def shape_of(path: str) -> str:
    return path.split(", branches")[0]


def summary(report):
    """Each site's status and the shape its witness is from. Not the paths themselves: a
    branch query near its time limit may leave a few paths out of either run."""
    return {(s.site, s.kind): (s.status, shape_of(s.witness_path)) for s in report.sites}


@pytest.mark.slow  # two legacy shapes solved twice: 20 to 60 s
def test_two_workers_give_the_same_statuses_and_the_simplest_shapes_witnesses():
    # A site witnessed on both shapes keeps the first (regular) shape's witness, whichever
    # worker finishes first.
    only = [Shape(3, False, None), Shape(3, True, None)]
    alone = prove("legacy", only=only, minimise=False, jobs=1)
    side_by_side = prove("legacy", only=only, minimise=False, jobs=2)
    assert summary(side_by_side) == summary(alone)
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
