"""The generic C worker decodes every kind of argument of a schema and answers every
output: a test op (``echo_op.py``: an optional tensor, an int list, an int, an optional
int, a bool, and two outputs) whose library spells back what it was given, judged through
the worker with its answers read raw."""

import pytest
from echo_op import EchoCase

from convcheck.case import TensorSpec
from convcheck.native import NativeJudge, wire
from convcheck.values import logical_values


class RawJudge(NativeJudge):
    """The worker's answers as they come, undecoded."""

    @staticmethod
    def outcome(answer):
        return answer


@pytest.fixture
def echo(plug_native_op):
    plug_native_op("echo", "echo_op:OP")
    with RawJudge("current", op="echo") as judge:
        yield judge


def call(extra=None, sizes=(2, 3), count=4, limit=None, flag=False, shape=(2, 3)):
    return EchoCase(
        TensorSpec(shape),
        extra,
        TensorSpec((1,) * len(shape)),
        TensorSpec((1,) * len(shape), dtype="int64"),
        sizes,
        count,
        limit,
        flag,
    )


def spelled(case) -> str:
    """What echo's check id says of ``case``: computed here from the case's fields."""
    extra = case.extra
    return (
        f"e{int(extra is not None)}.r{-1 if extra is None else extra.rank}.n{len(case.sizes)}"
        f".s{sum(case.sizes)}.c{case.count}.l{-1 if case.limit is None else case.limit}"
    )


@pytest.mark.parametrize(
    "case",
    [
        call(flag=True),
        call(extra=TensorSpec((5,)), sizes=(), count=-(2**63), limit=0, flag=True),
        call(extra=TensorSpec((1, 2, 3)), sizes=(2**62, 2**61, -7), limit=2**63 - 1, flag=True),
    ],
    ids=["absent", "edges", "long"],
)
def test_every_kind_of_argument_reaches_the_library(echo, case):
    (answer,) = echo.check([case])
    assert wire.decode(answer).describe() == f"reject {spelled(case)}"


def test_every_output_comes_back_with_its_sizes_and_values(echo):
    case = call(shape=(2, 3, 4))
    checked, ran = echo.check([case])[0], echo.run([case])[0]
    assert wire.outputs(checked) == [((2, 3, 4), None), ((4, 3, 2), None)]
    (out, out_values), (indices, index_values) = wire.outputs(ran)
    assert (out, indices) == ((2, 3, 4), (4, 3, 2))
    assert out_values == tuple(logical_values(case.input, "input").ravel().tolist())
    assert index_values == tuple(float(i) for i in range(24))
    assert wire.decode(ran).out_sizes == (2, 3, 4)


def test_a_second_outputs_abi_violation_names_it(echo):
    (answer,) = echo.check([call(count=99)])
    outcome = wire.decode(answer)
    assert (outcome.verdict, outcome.check) == ("abi-violation", "indices_rank")
    assert outcome.detail == "indices_rank is 99, not in 0..16"
