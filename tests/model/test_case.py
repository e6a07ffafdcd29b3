"""The case format: JSON round trip, and one clear error per malformed field."""

import json

import pytest
from builders import conv, t
from hypothesis import given

from convcheck import registry
from convcheck.case import TensorSpec
from convcheck.errors import InvalidCase
from convcheck.strategies import cases


@given(cases())
def test_json_round_trip(case):
    assert registry.loads_case(case.dumps()) == registry.case_from_json(json.loads(case.dumps()))
    assert registry.loads_case(case.dumps()).to_json() == case.to_json()


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
        (("bias", "sizes"), [4, 1], None),
        (("bias", "dtype"), ["float32"], "bias.dtype: unknown dtype ['float32']"),
        (("bias", "dtype"), {"a": 1}, "bias.dtype: unknown dtype {'a': 1}"),
        pytest.param(
            ("groups",),
            10**5000,
            "groups: expected an int64, got <an integer of 16610 bits>",
            id="groups-5000-digits",
        ),
        (("stride",), [1.0], "stride[0]: expected an int64, got 1.0"),
        (("input", "\ud800"), 1, "input.'\\ud800': unknown field"),
        (("weight",), KeyError, "case.weight: missing"),
        (("input", "sizes"), KeyError, "input.sizes: missing"),
        (("input", "layout"), "x", "input.layout: unknown field"),
        (("extra",), 1, "case.extra: unknown field"),
    ],
)
def test_malformed_case_names_the_field_and_value(path, value, message):
    if message is None:  # a valid edit, to check the one after it
        registry.case_from_json(mutate(path, value))
        return
    with pytest.raises(InvalidCase) as info:
        registry.case_from_json(mutate(path, value))
    assert message in str(info.value)


@pytest.mark.parametrize(
    "path, value",
    [(("input", "sizes"), [1] * 10**6), (("stride",), "x" * 10**6), (("bias",), [[[[[[[1]]]]]]])],
)
def test_a_huge_value_makes_a_short_message(path, value):
    with pytest.raises(InvalidCase) as info:
        registry.case_from_json(mutate(path, value))
    assert len(str(info.value)) < 200, str(info.value)


def test_a_bias_in_its_one_order_is_accepted():
    """A 1-D bias's only order is [0]; spelled out, it is the same case."""
    data = conv(bias=t(4)).to_json()
    data["bias"]["dim_order"] = [0]
    assert registry.case_from_json(data) == conv(bias=t(4))
    data["bias"] = {"sizes": [4, 1], "dtype": "float32", "dim_order": [0, 1]}
    assert registry.case_from_json(data).bias == t(4, 1)
    data["bias"]["dim_order"] = [1, 0]
    with pytest.raises(InvalidCase, match=r"bias.dim_order: .* only \[0, 1\] .*, got \[1, 0\]"):
        registry.case_from_json(data)


def test_a_contiguous_order_spelled_out_is_the_default():
    data = conv().to_json()
    assert data["input"]["dim_order"] == [0, 1, 2]
    del data["weight"]["dim_order"]
    assert registry.case_from_json(data) == conv()


def test_sizes_as_python_and_torch_give_them():
    """torch.Size, lists and numpy integers become the one canonical tuple of int."""
    import numpy as np

    torch = pytest.importorskip("torch")
    spec = TensorSpec(torch.empty(1, 2, 5).shape, "float32", [0, 1, 2])
    assert spec == t(1, 2, 5) and hash(spec) == hash(t(1, 2, 5))
    assert type(spec.sizes) is tuple and all(type(s) is int for s in spec.sizes)
    assert conv(input=TensorSpec([1, 2, 5])) == conv()
    assert TensorSpec(np.array([4, 2, 3]), dim_order=(np.int64(0), 2, 1)).order == (0, 2, 1)
    assert json.loads(conv(weight=TensorSpec(torch.Size([4, 2, 3]))).dumps()) == json.loads(
        conv().dumps()
    )
    with pytest.raises(InvalidCase, match=r"TensorSpec.sizes: expected integers, got \[1, 2.5\]"):
        TensorSpec([1, 2.5])
    with pytest.raises(InvalidCase, match="TensorSpec.dim_order: expected integers, got 'ab'"):
        TensorSpec((1, 2), dim_order="ab")


@pytest.mark.parametrize(
    "data, message",
    [
        (b"\xef\xbb\xbf" + conv().dumps().encode(), None),  # a BOM, as some editors write
        (b'{"input": "\xff"}', "case: not UTF-8 (byte 0xff at offset 11)"),
        (b"[" * 10**5, "case: nested too deeply to be a case or an entry"),
        (b'{"groups": ' + b"1" * 5000 + b"}", "case: an integer with more than 4300 digits"),
        (b'{"groups": 1}', "case: case.input: missing"),
    ],
)
def test_loads_takes_bytes_and_has_one_error(data, message):
    if message is None:
        assert registry.loads_case(data) == conv()
        return
    with pytest.raises(InvalidCase) as info:
        registry.loads_case(data)
    assert str(info.value) == message


def test_not_json_is_one_clear_error():
    with pytest.raises(InvalidCase, match="case file x.json: not JSON"):
        registry.loads_case("{", source="case file x.json")


def test_not_an_object():
    with pytest.raises(InvalidCase, match="case: expected a JSON object"):
        registry.case_from_json([1, 2])


def test_dim_order_defaults_to_contiguous_and_bias_may_be_null():
    data = conv(bias=None).to_json()
    del data["input"]["dim_order"]
    case = registry.case_from_json(data)
    assert case.input.order == (0, 1, 2)
    assert case.bias is None


def test_an_optional_int_left_out_is_absent():
    """An older case of an op that has since gained an optional int reads as it did."""
    tensor = {"sizes": [1, 1, 2, 2], "dtype": "int64", "dim_order": [0, 1, 2, 3]}
    data = {"input": tensor, "out": tensor, "kernel_size": [2], "stride": [], "padding": [0]}
    data |= {"ceil_mode": False, "count_include_pad": True, "divisor_override": -1}
    case = registry.case_from_json(data, op="avg_pool2d")
    assert (case.divisor_override, case.int64_fill) == (-1, None)
    del data["divisor_override"]
    assert registry.case_from_json(data, op="avg_pool2d") == case.replace(divisor_override=None)
    del data["ceil_mode"]  # a required argument still is
    with pytest.raises(InvalidCase, match="case.ceil_mode: missing"):
        registry.case_from_json(data, op="avg_pool2d")
