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
from convcheck.case import Case, contiguous_order
from convcheck.native.dtypes import DTYPE_CODES
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
    encoder = _ENCODERS.get(type(case)) or _compile(type(case))
    return encoder(case, run)


_ENCODERS: dict[type, Callable[[Any, bool], bytes]] = {}
_OPTIONAL_INT = struct.Struct("=BBq")
_BOOL = struct.Struct("=BB")
_INT = struct.Struct("=Bq")


def _compile(case_type: type) -> Callable[[Any, bool], bytes]:
    """``case_type``'s encoder, written out argument by argument and kept: one Python call
    per case, where a loop over the schema made one per argument (the native judge's
    thread encodes every case of a campaign)."""
    # A part per argument, each packed by a ``Struct`` kept per shape: "=" packs without
    # alignment, so the parts joined are the one format packed whole, at a third of the
    # cost of building and parsing that format for every case.
    args = schema.schema_of(case_type)
    lines, parts = [], ["HEADS[run]"]
    for i, arg in enumerate(args):
        kind, value = _KIND[type(arg)], f"a{i}"
        lines.append(f"    {value} = case.{arg.name}")
        if isinstance(arg, schema.Tensor):
            flags = TENSOR_PRESENT | (TENSOR_OUTPUT if arg.output else 0)
            rank = f"len({value}.sizes)"
            order = f"{value}.order" if arg.ordered else f"contiguous_order({rank})"
            part = (
                f"tensor_struct({rank}).pack({kind}, {flags}, {rank}, CODES[{value}.dtype], "
                f"{OFFSETS.get(arg.name, 0)}, *{value}.sizes, *{order})"
            )
            if arg.optional:
                absent = bytes((kind, flags & ~TENSOR_PRESENT))
                part = f"({absent!r} if {value} is None else {part})"
        elif isinstance(arg, schema.IntList):
            part = f"int64s(len({value})).pack({kind}, len({value}), *{value})"
        elif isinstance(arg, schema.OptionalInt):
            part = (
                f"({bytes((kind, 0))!r} if {value} is None else OPTIONAL.pack({kind}, 1, {value}))"
            )
        else:
            part = f"{'BOOL' if isinstance(arg, schema.Bool) else 'INT'}.pack({kind}, {value})"
        parts.append(part)
    source = "\n".join(
        ["def encode(case, run):", *lines, f"    return b''.join(({', '.join(parts)}))"]
    )
    namespace: dict[str, Any] = {
        "HEADS": (bytes((0, len(args))), bytes((1, len(args)))),
        "CODES": DTYPE_CODES,
        "tensor_struct": _tensor_struct,
        "int64s": _int64s,
        "contiguous_order": contiguous_order,
        "OPTIONAL": _OPTIONAL_INT,
        "BOOL": _BOOL,
        "INT": _INT,
    }
    exec(source, namespace)  # noqa: S102 (the source is made above from the schema's names)
    _ENCODERS[case_type] = namespace["encode"]
    return _ENCODERS[case_type]


@functools.cache
def _tensor_struct(rank: int) -> struct.Struct:
    return struct.Struct(f"=BBBBB{rank}i{rank}i")


@functools.cache
def _int32s(count: int) -> struct.Struct:
    return struct.Struct(f"={count}i")


@functools.cache
def _int64s(count: int) -> struct.Struct:
    return struct.Struct(f"=Bq{count}q")


def decode(answer: bytes) -> Outcome:
    """The outcome a worker's answer says: the sizes and values of the op's first output
    tensor (``outputs`` gives every one's)."""
    verdict = VERDICTS[answer[0]]
    if verdict == "accept":
        if answer[1] == 1 and not answer[3 + 4 * answer[2]]:  # one output, not run: most
            return Outcome.accept(_int32s(answer[2]).unpack_from(answer, 3))
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


def outputs(answer: bytes) -> list[tuple[tuple[int, ...], tuple[float, ...] | None]] | None:
    """Every output tensor's sizes and values (None when it did not run) in an accepting
    answer, in schema order; None for another verdict."""
    if VERDICTS[answer[0]] != "accept":
        return None
    sizes, values = _accepted(answer)
    if values is None:
        return [(each, None) for each in sizes]
    return [(each, tuple(v.tolist())) for each, v in zip(sizes, values, strict=True)]


def _accepted(answer: bytes) -> tuple[list[tuple[int, ...]], list[array] | None]:
    count = answer[1]
    at = 2
    sizes = []
    for _ in range(count):
        rank = answer[at]
        sizes.append(_int32s(rank).unpack_from(answer, at + 1))
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
