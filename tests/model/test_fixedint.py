"""fixedint against the machine: ctypes' fixed-width integers and numpy's C remainder."""

import ctypes

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from convcheck.fixedint import (
    DIVISION_BY_ZERO,
    INT32_MAX,
    INT32_MIN,
    INT64_MAX,
    INT64_MIN,
    SIGNED_OVERFLOW,
    UINT64_MAX,
    Exact,
    Wrapping,
)

EDGES64 = [0, 1, -1, 2, -2, INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1, 2**32, -(2**32)]
i64 = st.one_of(st.sampled_from(EDGES64), st.integers(INT64_MIN, INT64_MAX))
i32 = st.one_of(
    st.sampled_from([0, 1, -1, INT32_MAX, INT32_MIN]), st.integers(INT32_MIN, INT32_MAX)
)
u64 = st.one_of(st.sampled_from([0, 1, UINT64_MAX, 2**63]), st.integers(0, UINT64_MAX))


def in_range(value, bits):
    return -(2 ** (bits - 1)) <= value < 2 ** (bits - 1)


@pytest.mark.parametrize(
    "op, exact_op, bits, c_type",
    [
        ("add_i64", lambda a, b: a + b, 64, ctypes.c_int64),
        ("sub_i64", lambda a, b: a - b, 64, ctypes.c_int64),
        ("mul_i64", lambda a, b: a * b, 64, ctypes.c_int64),
    ],
)
@given(a=i64, b=i64)
def test_signed_64_wraps_like_the_machine_and_flags_overflow(op, exact_op, bits, c_type, a, b):
    arith = Wrapping()
    result = getattr(arith, op)(a, b, "site")
    assert result == c_type(exact_op(a, b)).value
    overflowed = not in_range(exact_op(a, b), bits)
    assert [e.kind for e in arith.ub] == ([SIGNED_OVERFLOW] if overflowed else [])


@pytest.mark.parametrize(
    "op, exact_op", [("add_i32", int.__add__), ("sub_i32", int.__sub__), ("mul_i32", int.__mul__)]
)
@given(a=i32, b=i32)
def test_signed_32_wraps_like_the_machine(op, exact_op, a, b):
    arith = Wrapping()
    assert getattr(arith, op)(a, b, "s") == ctypes.c_int32(exact_op(a, b)).value
    assert bool(arith.ub) == (not in_range(exact_op(a, b), 32))


@pytest.mark.parametrize(
    "op, exact_op", [("add_u64", int.__add__), ("sub_u64", int.__sub__), ("mul_u64", int.__mul__)]
)
@given(a=u64, b=u64)
def test_unsigned_wraps_without_undefined_behaviour(op, exact_op, a, b):
    arith = Wrapping()
    assert getattr(arith, op)(a, b, "s") == ctypes.c_uint64(exact_op(a, b)).value
    assert arith.ub == []


@given(a=i64, b=i64.filter(lambda v: v != 0))
def test_division_truncates_toward_zero_like_c(a, b):
    arith = Wrapping()
    q = arith.div_i64(a, b, "q")
    r = arith.rem_i64(a, b, "r")
    if a == INT64_MIN and b == -1:
        assert [e.kind for e in arith.ub] == [SIGNED_OVERFLOW, SIGNED_OVERFLOW]
        return
    assert r == int(np.fmod(np.int64(a), np.int64(b)))
    assert q * b + r == a
    assert abs(r) < abs(b)
    assert arith.ub == []


@pytest.mark.parametrize(
    "op, a, b, kind",
    [
        ("div_i64", 4, 0, DIVISION_BY_ZERO),
        ("rem_i64", 4, 0, DIVISION_BY_ZERO),
        ("div_i64", INT64_MIN, -1, SIGNED_OVERFLOW),
        ("rem_i64", INT64_MIN, -1, SIGNED_OVERFLOW),
        ("div_i32", INT32_MIN, -1, SIGNED_OVERFLOW),
        ("div_u64", 4, 0, DIVISION_BY_ZERO),
        ("mul_i64", INT64_MAX, 4, SIGNED_OVERFLOW),
        ("add_i64", INT64_MAX, 1, SIGNED_OVERFLOW),
        ("sub_i64", INT64_MIN, 1, SIGNED_OVERFLOW),
        ("mul_i32", 65536, 65536, SIGNED_OVERFLOW),
    ],
)
def test_undefined_behaviour_table(op, a, b, kind):
    arith = Wrapping()
    getattr(arith, op)(a, b, "the.site")
    assert [(e.site, e.kind, e.operands) for e in arith.ub] == [("the.site", kind, (a, b))]


def test_negation_of_the_minimum_is_undefined():
    arith = Wrapping()
    assert arith.neg_i64(INT64_MIN, "n") == INT64_MIN
    assert arith.neg_i32(INT32_MIN, "n") == INT32_MIN
    assert [e.kind for e in arith.ub] == [SIGNED_OVERFLOW, SIGNED_OVERFLOW]


@given(a=i64)
def test_narrowing_to_int32_is_recorded_apart_from_ub(a):
    arith = Wrapping()
    assert arith.narrow_i32(a, "n") == ctypes.c_int32(a).value
    assert arith.ub == []
    assert len(arith.narrowing) == (0 if in_range(a, 32) else 1)


@given(a=i64)
def test_signed_to_size_t_and_back_round_trips(a):
    arith = Wrapping()
    as_unsigned = arith.i64_to_u64(a, "u")
    assert as_unsigned == ctypes.c_uint64(a).value
    assert arith.u64_to_i64(as_unsigned, "s") == a
    assert len(arith.narrowing) == (1 if a < 0 else 0)


@given(a=i64, b=i64)
def test_exact_arithmetic_never_wraps_but_still_flags(a, b):
    arith = Exact()
    assert arith.mul_i64(a, b, "m") == a * b
    assert arith.narrow_i32(a, "n") == a
    assert bool(arith.ub) == (not in_range(a * b, 64))


def test_exact_division_by_zero_is_still_undefined():
    arith = Exact()
    arith.rem_i64(4, 0, "r")
    assert [e.kind for e in arith.ub] == [DIVISION_BY_ZERO]


@given(a=i64, b=i64)
def test_checked_multiply_answers_none_exactly_when_the_product_does_not_fit(a, b):
    product = Wrapping().mul_checked_i64(a, b, "c")
    assert (product is None) == (not in_range(a * b, 64))


BINARY = [
    f"{op}_{kind}" for op in ("add", "sub", "mul", "div", "rem") for kind in ("i64", "i32", "u64")
]
UNARY = ["neg_i64", "neg_i32", "i64_to_u64", "u64_to_i64", "narrow_i32"]
any_int = st.one_of(i64, u64, st.sampled_from([INT32_MIN, INT32_MAX + 1, UINT64_MAX + 1]))
# The pairs where a quotient leaves its type, which drawing each operand alone rarely meets.
EDGE_PAIRS = [(INT64_MIN, -1), (INT32_MIN, -1), (-1, 1), (0, 0)]


@pytest.mark.parametrize("op", [*BINARY, *UNARY, "mul_checked_i64"])
@given(data=st.data())
def test_the_two_arithmetics_part_exactly_where_a_value_leaves_its_type(op, data):
    """What lets ``classify`` run once: both arithmetics flag ``left_width`` alike, and
    unflagged they return and record the same; flagged, C's answer is another one."""
    if op in UNARY:
        operands = [data.draw(any_int)]
    else:
        operands = data.draw(st.one_of(st.sampled_from(EDGE_PAIRS), st.tuples(any_int, any_int)))
    runs = []
    for arith in (Wrapping(), Exact()):
        result = getattr(arith, op)(*operands, "s")
        runs.append((arith.left_width, (result, arith.trace, arith.ub, arith.narrowing)))
    (c_left, c_recorded), (exact_left, exact_recorded) = runs
    assert c_left == exact_left
    assert (c_recorded == exact_recorded) == (not c_left)
