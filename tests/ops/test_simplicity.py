"""One order for "simpler", read off each op's schema: the toy op's cases are ordered by
the same rules as convolution's, with nothing of its own declared."""

from window_op import WindowCase

from convcheck.case import TensorSpec
from convcheck.simplicity import complexity, simplest_values, size_cost, sort_key, value_key


def window(n: int, k: int, stride: int = 1) -> WindowCase:
    return WindowCase(
        input=TensorSpec((1, 1, n)),
        out=TensorSpec((1, 1, n - k + 1)),
        kernel_size=(k,),
        stride=(stride,),
    )


def test_the_simplest_values_are_the_schemas():
    assert simplest_values(WindowCase) == {"kernel_size": 1, "stride": 1}


def test_fewer_elements_and_smaller_integers_are_simpler():
    assert complexity(window(4, 2)) < complexity(window(8, 2)) < complexity(window(8, 2, 1 << 20))
    assert sorted([window(8, 2), window(4, 2)], key=sort_key) == [window(4, 2), window(8, 2)]


def test_one_integer_is_simpler_valid_then_near_its_simplest_value_then_above_it():
    order = sorted([-1, 0, 3, 1, 2], key=lambda v: value_key(v, simplest=1, low=1))
    assert order == [1, 2, 3, 0, -1]


def test_a_size_of_one_costs_nothing_and_an_empty_dim_is_unusual():
    assert [size_cost(s) for s in (1, 0, 2, 7)] == [0, 1, 2, 7]
