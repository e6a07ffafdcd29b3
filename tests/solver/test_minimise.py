"""Witnesses minimised in Python and proven smallest by plain queries, held to Optimize."""

import pytest

z3 = pytest.importorskip("z3")

from convcheck.fixedint import INT64_MAX  # noqa: E402
from convcheck.ops.convolution.solving import ConvolutionShape as Shape  # noqa: E402
from convcheck.solver import limits  # noqa: E402
from convcheck.solver.concrete import Assignment, holds  # noqa: E402
from convcheck.solver.explore import Inputs  # noqa: E402
from convcheck.solver.minimise import cost, smallest  # noqa: E402
from convcheck.solver.prove import _optimised  # noqa: E402


def _groups_overflow():
    """The ordering bug's query: ``groups * w.size(1)`` past int64, from a large input."""
    inputs = Inputs.of(Shape(3, False, None))
    groups, w1 = inputs.ints["groups"][0], inputs.sizes["weight"][1]
    condition = groups * w1 > INT64_MAX
    start = {str(t): 1000 + i for i, t in enumerate(inputs.terms())}
    start.update({"groups": 2**62 + 12345, "weight.sizes[1]": 7, "stride[0]": -5})
    assert holds([condition, *inputs.domain], start)
    return inputs, condition, Assignment(start)


def test_the_shrunk_witness_is_the_hand_minimal_one_and_proven():
    inputs, condition, start = _groups_overflow()
    found, proven = smallest(inputs, (condition,), start)
    assert proven
    values = found.values
    assert values["groups"] == 2**62 and values["weight.sizes[1]"] == 2
    others = {k: v for k, v in values.items() if k not in ("groups", "weight.sizes[1]")}
    sizes = {k: v for k, v in others.items() if "sizes" in k}
    assert set(sizes.values()) == {1}
    assert (others["stride[0]"], others["padding[0]"], others["dilation[0]"]) == (1, 0, 1)


def test_the_proven_cost_is_the_cost_optimize_finds():
    inputs, condition, start = _groups_overflow()
    found, proven = smallest(inputs, (condition,), start)
    optimised = _optimised(inputs, [], condition, limits.MINIMISE)
    assert proven and optimised is not None
    assert cost(inputs, found.values) == cost(inputs, Assignment.of(optimised).values)


def test_out_of_steps_keeps_a_real_input_and_says_so():
    inputs, condition, start = _groups_overflow()
    found, proven = smallest(inputs, (condition,), start, rlimit=1)
    assert not proven
    assert holds([condition, *inputs.domain], found.values)
    assert cost(inputs, found.values) <= cost(inputs, start.values)
