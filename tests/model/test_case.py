"""The case format: JSON round trip, and one clear error per malformed field."""

import json

import pytest
from builders import conv, t
from hypothesis import given

from convcheck.case import Case
from convcheck.errors import InvalidCase
from convcheck.strategies import cases


@given(cases())
def test_json_round_trip(case):
    assert Case.loads(case.dumps()) == Case.from_json(json.loads(case.dumps()))
    assert Case.loads(case.dumps()).to_json() == case.to_json()


def mutate(path, value):
    data = conv(bias=t(4)).to_json()
    target = data
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return data


@pytest.mark.parametrize(
    "path, value, message",
    [
        (("groups",), "1", "groups: expected an int64, got '1'"),
        (("groups",), 2**63, "groups: expected an int64"),
        (("groups",), True, "groups: expected an int64, got True"),
        (("stride",), 1, "stride: expected a list of int64, got 1"),
        (("padding",), [0, -(2**63) - 1], "padding[1]: expected an int64"),
        (("transposed",), 0, "transposed: expected true or false, got 0"),
        (
            ("input", "sizes"),
            [1, -1, 5],
            "input.sizes[1]: expected an integer in 0..2147483647, got -1",
        ),
        (
            ("weight", "sizes"),
            [4, 2, 2**31],
            "weight.sizes[2]: expected an integer in 0..2147483647",
        ),
        (("out", "dtype"), "complex64", "out.dtype: unknown dtype 'complex64'"),
        (
            ("input", "dim_order"),
            [0, 0, 1],
            "input.dim_order: expected a permutation of 0..2, got [0, 0, 1]",
        ),
        (("input", "dim_order"), ["a", 1, 2], "input.dim_order: expected a permutation"),
        (("bias", "dim_order"), [0], "bias.dim_order: a bias has no dim order"),
        (("weight",), KeyError, "case.weight: missing"),
        (("input", "sizes"), KeyError, "input.sizes: missing"),
        (("input", "layout"), "x", "input.layout: unknown field"),
        (("extra",), 1, "case.extra: unknown field"),
    ],
)
def test_malformed_case_names_the_field_and_value(path, value, message):
    with pytest.raises(InvalidCase) as info:
        Case.from_json(mutate(path, value))
    assert message in str(info.value)


def test_not_json_is_one_clear_error():
    with pytest.raises(InvalidCase, match="case file x.json: not JSON"):
        Case.loads("{", source="case file x.json")


def test_not_an_object():
    with pytest.raises(InvalidCase, match="case: expected a JSON object"):
        Case.from_json([1, 2])


def test_dim_order_defaults_to_contiguous_and_bias_may_be_null():
    data = conv(bias=None).to_json()
    del data["input"]["dim_order"]
    case = Case.from_json(data)
    assert case.input.order == (0, 1, 2)
    assert case.bias is None
