"""``prove`` in worker processes gives the report one process gives."""

import pytest

pytest.importorskip("z3")

from convcheck.solver import prove  # noqa: E402
from convcheck.solver.explore import Shape  # noqa: E402
from convcheck.solver.symbolic import WITNESS  # noqa: E402


def summary(report):
    return {
        (s.site, s.kind): (s.status, sorted((p.path, p.status) for p in s.paths), s.witness_path)
        for s in report.sites
    }


@pytest.mark.slow  # two legacy shapes solved twice: 20 to 60 s
def test_two_workers_give_the_same_statuses_and_the_simplest_shapes_witnesses():
    # Both shapes reach the division by groups: its witness must stay the regular one's,
    # the first shape, whichever worker finishes first.
    only = [Shape(3, False, None), Shape(3, True, None)]
    alone = prove("legacy", only=only, minimise=False, jobs=1)
    side_by_side = prove("legacy", only=only, minimise=False, jobs=2)
    assert summary(side_by_side) == summary(alone)
    witnessed = [s for s in alone.sites if s.status == WITNESS]
    assert witnessed
    in_both = [s for s in witnessed if {p.path.split(",")[0] for p in s.paths} > {"rank 3 regular"}]
    assert in_both and all(s.witness_path.startswith("rank 3 regular") for s in in_both)
    assert (side_by_side.paths, side_by_side.shapes_done) == (alone.paths, 2)
