"""The parent's side of the C worker's records (``worker_main.c``): a case in, an answer
out, in the machine's byte order (both ends run on one machine).

A request names no op's parameter: it is the case's call schema (``convcheck.schema``) in
order. The mode (uint8: 0 check, 1 run), the argument count (uint8), then each argument's
kind (uint8, ``ARG_KINDS``) and value: a tensor's flags (uint8: ``TENSOR_PRESENT``,
``TENSOR_OUTPUT``) and, if present, its rank, dtype and value offset (uint8 each; the
offset is where ``convcheck.values`` starts its sequence), its sizes and its dim order
(int32 each; a tensor read contiguously is sent in its contiguous order); an int list's
count (int64) and that many int64; an int's int64; an optional int's presence (uint8)
and its int64 if present; a bool's uint8.

An answer: the verdict (uint8, ``VERDICTS``), then for accept the number of output
tensors (uint8) and each one's rank (uint8) and sizes (int32 each), ran (uint8) and, if
ran, for each output a count (uint32) and that many float64 values in logical order; for
reject the check id; for abi-violation the field and the detail; for tool-error the detail
(each string a uint32 length and its bytes).
"""

from __future__ import annotations

import functools
import struct
from array import array
from collections.abc import Callable
from typing import Any

from convcheck import schema
from convcheck.case import Case, TensorSpec, contiguous_order
from convcheck.native.abi import DTYPE_CODES
from convcheck.outcome import Outcome
from convcheck.sandbox import record_string
from convcheck.values import OFFSETS

VERDICTS = ("accept", "reject", "abi-violation", "tool-error")
# An argument's kind, by the schema's class of it.
ARG_KINDS = ("tensor", "int-list", "int", "optional-int", "bool")
TENSOR_PRESENT = 1
TENSOR_OUTPUT = 2
_COUNT = struct.Struct("=I")
_KIND = {
    schema.Tensor: 0,
    schema.IntList: 1,
    schema.Int: 2,
    schema.OptionalInt: 3,
    schema.Bool: 4,
}


def encode(case: Case, run: bool) -> bytes:
    """The request for ``case``, from its schema."""
    # A part per argument, each packed by a ``Struct`` kept per shape: "=" packs without
    # alignment, so the parts joined are the one format packed whole, at a third of the
    # cost of building and parsing that format for every case (the native judge's thread
    # encodes every case of a campaign).
    found = _PLANS.get(type(case))
    head, plan = found if found is not None else _plan(type(case))
    return b"".join([head[run], *[put(getattr(case, name)) for name, put in plan]])


# Each mode's first bytes, and each argument's name and encoder.
_Plan = tuple[tuple[bytes, bytes], tuple[tuple[str, Callable[[Any], bytes]], ...]]
_PLANS: dict[type, _Plan] = {}


def _plan(case_type: type) -> _Plan:
    """``case_type``'s plan (kept: made once per op)."""
    args = schema.schema_of(case_type)
    heads = (bytes((0, len(args))), bytes((1, len(args))))
    _PLANS[case_type] = heads, tuple((arg.name, _encoder(arg)) for arg in args)
    return _PLANS[case_type]


def _encoder(arg: schema.Arg) -> Callable[[Any], bytes]:
    kind = _KIND[type(arg)]
    if isinstance(arg, schema.Tensor):
        flags = TENSOR_PRESENT | (TENSOR_OUTPUT if arg.output else 0)
        absent = bytes((kind, flags & ~TENSOR_PRESENT))
        offset = OFFSETS.get(arg.name, 0)
        ordered = arg.ordered

        def tensor(spec: TensorSpec | None) -> bytes:
            if spec is None:
                return absent
            rank = len(spec.sizes)
            order = spec.order if ordered else contiguous_order(rank)
            return _tensor_struct(rank).pack(
                kind, flags, rank, DTYPE_CODES[spec.dtype], offset, *spec.sizes, *order
            )

        return tensor
    if isinstance(arg, schema.IntList):

        def int_list(numbers: tuple[int, ...]) -> bytes:
            return _int64s(len(numbers)).pack(kind, len(numbers), *numbers)

        return int_list
    if isinstance(arg, schema.OptionalInt):
        absent_int = bytes((kind, 0))
        present = struct.Struct("=BBq")
        return lambda value: absent_int if value is None else present.pack(kind, 1, value)
    scalar = struct.Struct("=BB" if isinstance(arg, schema.Bool) else "=Bq")
    return lambda value: scalar.pack(kind, value)


@functools.cache
def _tensor_struct(rank: int) -> struct.Struct:
    return struct.Struct(f"=BBBBB{rank}i{rank}i")


@functools.cache
def _int64s(count: int) -> struct.Struct:
    return struct.Struct(f"=Bq{count}q")


def decode(answer: bytes) -> Outcome:
    """The outcome a worker's answer says: the sizes and values of the op's first output
    tensor (``outputs`` gives every one's)."""
    verdict = VERDICTS[answer[0]]
    if verdict == "accept":
        outputs, values = _accepted(answer)
        if values is None:
            return Outcome.accept(outputs[0])
        return Outcome.accept(outputs[0], tuple(values[0].tolist()))
    text, at = record_string(answer, 1)
    if verdict == "reject":
        return Outcome.reject(text)
    if verdict == "abi-violation":
        detail, _ = record_string(answer, at)
        return Outcome.abi_violation(text, detail=detail)
    return Outcome.tool_error(detail=text)


def outputs(answer: bytes) -> list[tuple[int, ...]] | None:
    """Every output tensor's sizes in an accepting answer, in schema order; None for
    another verdict."""
    if VERDICTS[answer[0]] != "accept":
        return None
    return _accepted(answer)[0]


def _accepted(answer: bytes) -> tuple[list[tuple[int, ...]], list[array] | None]:
    count = answer[1]
    at = 2
    sizes = []
    for _ in range(count):
        rank = answer[at]
        sizes.append(struct.unpack_from(f"={rank}i", answer, at + 1))
        at += 1 + 4 * rank
    if not answer[at]:
        return sizes, None
    at += 1
    values = []
    for _ in range(count):
        (n,) = _COUNT.unpack_from(answer, at)
        values.append(array("d", answer[at + 4 : at + 4 + 8 * n]))
        at += 4 + 8 * n
    return sizes, values
