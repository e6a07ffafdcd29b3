"""The solver's evaluation of z3 terms over plain ints, held to z3's own."""

import random

import pytest

z3 = pytest.importorskip("z3")

from convcheck.fixedint import INT32_MAX, INT64_MAX  # noqa: E402
from convcheck.solver import concrete  # noqa: E402
from convcheck.solver.concrete import Assignment  # noqa: E402


def test_terms_evaluate_as_z3_evaluates_them():
    x, y, g = z3.Ints("x y g")
    terms = [
        x + y * g,
        x / g,
        x % g,
        z3.If(x > y, x - y, y - x),
        z3.And(x >= -3, z3.Or(y < 2, g == 0)),
        -x,
        z3.Abs(x),
        z3.Not(x == y),
        z3.Distinct(x, y),
        z3.Implies(x > 0, y > 0),
        z3.simplify((x * y + 2**31) % 2**32 - 2**31),  # a narrowing, as Symbolic writes it
        # By a constant: Python's own // and % for a positive one, z3's rules for the rest.
        x / 7,
        x % 7,
        x / -7,
        x % -7,
    ]
    rnd = random.Random(1)
    compared = 0
    for _ in range(300):
        env = {
            "x": rnd.choice([0, 1, -1, 7, -7, 2**63, -(2**63), rnd.randint(-100, 100)]),
            "y": rnd.randint(-10, 10),
            "g": rnd.choice([1, -1, 3, -4, 2**40]),
        }
        solver = z3.Solver()
        solver.add(x == env["x"], y == env["y"], g == env["g"])
        assert solver.check() == z3.sat
        model = solver.model()
        for term in terms:
            got = Assignment(env).eval(term)
            assert z3.simplify(got == model.eval(term, model_completion=True)), (term, env)
            compared += 1
    assert compared == 300 * len(terms)


def test_a_division_by_zero_satisfies_nothing():
    x, g = z3.Ints("x g")
    assert not concrete.holds([x / g == 0], {"x": 5, "g": 0})
    assert concrete.holds([x / g == -2], {"x": 5, "g": -2})  # Euclidean: 5 = -2 * -2 + 1
    assert concrete.holds([x % g == 1], {"x": -5, "g": -3})  # z3's mod is never negative


def test_nearby_finds_edge_inputs_and_only_true_ones():
    """A query a step from the path's input is answered without z3; every answer meets
    the query, and an unsatisfiable one gets none."""
    w, g = z3.Ints("w g")
    domain = [w >= 0, w <= INT32_MAX, g >= -(2**63), g <= INT64_MAX]
    start = Assignment({"w": 2, "g": 1})
    found = concrete.nearby(start, [g * w > INT64_MAX], domain)
    assert found is not None and found.values["w"] == 2
    assert found.holds([g * w > INT64_MAX, *domain])
    assert concrete.nearby(start, [g * w > INT64_MAX, w == 0], domain) is None
    # One change breaks a condition; a second one repairs it.
    decisions = [w >= 0, w <= INT64_MAX, g >= 0, g <= INT64_MAX, w == g]
    wanted = [w * g > 2**40, w > 2**32]  # no pair of small edge values meets it
    start = Assignment({"w": 1, "g": 1})
    assert concrete.nearby(start, wanted, decisions) is None
    found = concrete.nearby(start, wanted, decisions, repairs=8)
    assert found is not None and found.holds([*wanted, *decisions])
