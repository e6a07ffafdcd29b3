"""``prove`` in worker processes gives the report one process gives."""

import pytest

pytest.importorskip("z3")

from convcheck.solver import prove  # noqa: E402
from convcheck.solver.explore import Shape  # noqa: E402
from convcheck.solver.symbolic import WITNESS  # noqa: E402


def shape_of(path: str) -> str:
    return path.split(", branches")[0]


def answers(report) -> dict:
    """Everything the solver answered: every site's paths, statuses and witness. z3's
    work is bounded by steps, not by a clock, so two runs answer alike to the byte."""
    data = report.to_json()
    for site in data["sites"]:
        del site["seconds"]
    del data["seconds"]
    return data


@pytest.mark.slow  # two legacy shapes solved twice: 20 to 60 s
def test_two_workers_give_the_report_of_one_and_the_simplest_shapes_witnesses():
    # A site witnessed on both shapes keeps the first (regular) shape's witness, whichever
    # worker finishes first.
    only = [Shape(3, False, None), Shape(3, True, None)]
    alone = prove("legacy", only=only, jobs=1)
    side_by_side = prove("legacy", only=only, jobs=2)
    assert answers(side_by_side) == answers(alone)
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
