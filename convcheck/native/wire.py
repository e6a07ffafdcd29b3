"""The parent's side of the C worker's records (``worker_main.c``): a case in, an answer
out, in the machine's byte order (both ends run on one machine).

A request: mode (uint8: 0 check, 1 run); input, weight; has_bias (uint8) and the bias if
set; out; transposed (uint8), groups (int64); stride, padding, dilation, output_padding,
each a count (int64) and that many int64. A tensor: rank and dtype (uint8 each), then its
sizes and its dim order (int32 each; a bias is read in its contiguous order).

An answer: the verdict (uint8, ``VERDICTS``), then for accept the out rank (uint8), the out
sizes (int32 each), ran (uint8) and, if ran, a count (uint32) and that many float64 values
in logical order; for reject the check id; for abi-violation the field and the detail; for
tool-error the detail (each string a uint32 length and its bytes).
"""

from __future__ import annotations

import functools
import struct
from array import array
from typing import Any

from convcheck.case import TensorSpec, contiguous_order
from convcheck.native.abi import DTYPE_CODES
from convcheck.outcome import Outcome
from convcheck.sandbox import record_string

VERDICTS = ("accept", "reject", "abi-violation", "tool-error")
_COUNT = struct.Struct("=I")


def encode(case: Any, run: bool) -> bytes:  # a convolution's call: convcheck_abi.h is its ABI
    # A part per field, each packed by a ``Struct`` kept per shape: "=" packs without
    # alignment, so the parts joined are the one format packed whole, at a third of the
    # cost of building and parsing that format for every case (the native judge's thread
    # encodes every case of a campaign).
    bias = case.bias
    parts = [
        _MODES[run],
        _tensor(case.input, case.input.order),
        _tensor(case.weight, case.weight.order),
        _NO_BIAS if bias is None else _HAS_BIAS + _tensor(bias, contiguous_order(bias.rank)),
        _tensor(case.out, case.out.order),
        _FLAGS.pack(case.transposed, case.groups),
    ]
    for numbers in (case.stride, case.padding, case.dilation, case.output_padding):
        parts.append(_int64s(len(numbers)).pack(len(numbers), *numbers))
    return b"".join(parts)


def _tensor(spec: TensorSpec, order: tuple[int, ...]) -> bytes:
    rank = len(spec.sizes)
    return _tensor_struct(rank).pack(rank, DTYPE_CODES[spec.dtype], *spec.sizes, *order)


@functools.cache
def _tensor_struct(rank: int) -> struct.Struct:
    return struct.Struct(f"=BB{rank}i{rank}i")


@functools.cache
def _int64s(count: int) -> struct.Struct:
    return struct.Struct(f"=q{count}q")


_MODES = (b"\0", b"\1")  # check, run
_NO_BIAS, _HAS_BIAS = b"\0", b"\1"
_FLAGS = struct.Struct("=Bq")  # transposed, groups


def decode(answer: bytes) -> Outcome:
    """The outcome a worker's answer says."""
    verdict = VERDICTS[answer[0]]
    if verdict == "accept":
        rank = answer[1]
        at = 2 + 4 * rank
        sizes = struct.unpack_from(f"={rank}i", answer, 2)
        if not answer[at]:
            return Outcome.accept(sizes)
        (count,) = _COUNT.unpack_from(answer, at + 1)
        values = array("d", answer[at + 5 : at + 5 + 8 * count])
        return Outcome.accept(sizes, tuple(values.tolist()))
    text, at = record_string(answer, 1)
    if verdict == "reject":
        return Outcome.reject(text)
    if verdict == "abi-violation":
        detail, _ = record_string(answer, at)
        return Outcome.abi_violation(text, detail=detail)
    return Outcome.tool_error(detail=text)
