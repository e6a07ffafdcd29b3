"""The random engine starts from the solver's cases for any op that names the solver shapes
its seeds come from (``Op.seed_shapes``), not only the default op: the toy window op's two
legacy bugs (three sites where legacy's output size is undefined before a check rejects
the call) are all in the first handful of cases, where sampling alone does not find them
all."""

import sys
from pathlib import Path

import pytest

pytest.importorskip("z3")

from convcheck import registry  # noqa: E402
from convcheck.campaign import Budget, Campaign  # noqa: E402
from convcheck.engines import random  # noqa: E402
from convcheck.judges import Judges  # noqa: E402
from convcheck.solver.seeds import seed_cases  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def solvable_window():
    sys.path.insert(0, str(Path(__file__).parents[1] / "solver"))
    added = "solvable_window" not in registry.OPS
    registry.register("solvable_window", "solvable_window:OP")
    yield
    if added:
        del registry.OPS["solvable_window"]
    registry.get.cache_clear()


def found(cases: int, solved: bool) -> set[str]:
    with Judges("legacy", op="solvable_window", use_native=False) as judges:
        run = Campaign(judges, budget=Budget(cases=cases))
        run.explore(lambda campaign, seed: random.explore(campaign, seed, solved), 1)
        return set(run.found)


def test_the_solvers_cases_come_first_for_a_solvable_op():
    first = len(seed_cases("legacy", op="solvable_window"))
    every = {f"ordering | output_size.{site}" for site in ("span", "steps", "plus_1")}
    assert found(first, solved=True) == every
    assert found(first, solved=False) < every
