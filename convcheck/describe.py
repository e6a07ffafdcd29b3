"""A case in one line, for people: what a report, ``ci`` and ``prove`` print under a bug.

Each op may say how its calls read (``Op.describe_case``, its legend ``Op.case_legend``);
the pieces here are the ones every op's line is made of, and ``by_schema`` the line of an
op that says nothing: each argument under its own name.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from convcheck import registry
from convcheck.case import TensorSpec
from convcheck.schema import Bool, IntList, Tensor, schema_of

__all__ = [
    "TENSOR_LEGEND",
    "by_schema",
    "case_legend",
    "describe_case",
    "describe_int",
    "describe_ints",
    "describe_tensor",
]

# Short dtype names, as JAX and MLIR print them: a tensor reads ``f32[1,2,3]``, so no
# dtype can be read as another tensor's.
_DTYPE_NAMES = {
    "float16": "f16",
    "bfloat16": "bf16",
    "float32": "f32",
    "float64": "f64",
    "int8": "i8",
    "uint8": "u8",
    "int16": "i16",
    "int32": "i32",
    "int64": "i64",
    "bool": "bool",
}


# How a tensor reads in a case line: every op's legend starts with it.
TENSOR_LEGEND = "tensors: dtype[sizes]{dim order, when not contiguous}"


def describe_int(value: int) -> str:
    """A large integer near a power of two as that power (``2^62``, ``2^31-1``): the edges
    the fuzzer aims at, which nobody reads digit by digit."""
    magnitude = abs(value)
    if magnitude < 1 << 16:
        return str(value)
    sign = "-" if value < 0 else ""
    for power in (magnitude.bit_length() - 1, magnitude.bit_length()):
        offset = magnitude - (1 << power)
        if abs(offset) <= 2:
            return f"{sign}2^{power}" + (f"{offset:+d}" if offset else "")
    return str(value)


def describe_ints(values: Iterable[int]) -> str:
    return ",".join(describe_int(v) for v in values)


def describe_tensor(tensor: TensorSpec) -> str:
    order = "" if tensor.dim_order is None else "{" + describe_ints(tensor.dim_order) + "}"
    return f"{_DTYPE_NAMES.get(tensor.dtype, tensor.dtype)}[{describe_ints(tensor.sizes)}]{order}"


def describe_case(case: Any) -> str:
    """The line ``case``'s op writes for it, else each argument by its name."""
    return registry.op_of(case).describe_case(case) or by_schema(case)


def case_legend(case: Any) -> str:
    """How to read ``describe_case``'s line for ``case``."""
    return registry.op_of(case).case_legend or TENSOR_LEGEND


def by_schema(case: Any) -> str:
    """Every argument under its own name, an absent one left out, a flag only when it
    is not its simplest value: ``input=f32[1,1,5] out=f32[1,1,1] stride=[2]``."""
    parts = []
    case_type: type = type(case)  # as in Case.to_json
    for arg in schema_of(case_type):
        value = getattr(case, arg.name)
        if value is None:
            continue
        if isinstance(arg, Tensor):
            parts.append(f"{arg.name}={describe_tensor(value)}")
        elif isinstance(arg, IntList):
            parts.append(f"{arg.name}=[{describe_ints(value)}]")
        elif isinstance(arg, Bool):
            if value != arg.simplest:
                parts.append(f"{arg.name}={str(value).lower()}")
        else:
            parts.append(f"{arg.name}={describe_int(value)}")
    return " ".join(parts)
