"""A call's schema: what each argument of an op is, read off the op's case type.

An op's case is a frozen dataclass whose fields are the call's arguments in the kernel's
order. Each field is declared with one of the functions below, which say what kind of
argument it is (a tensor, an int64 list, an int64, a bool, an optional int64) and, for
integers, the value a person would write and the smallest valid one. That one
declaration is all the core reads: the JSON form, validation, shrinking, the simplicity
order and the solver's symbolic inputs are derived from it, so no core module names a
parameter of any op.

    @frozen
    class WindowCase(Case):
        input: TensorSpec = tensor()
        kernel_size: tuple[int, ...] = int_list(simplest=1, low=1)
        ceil_mode: bool = boolean()
        OP = "window"
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Arg",
    "Bool",
    "Int",
    "IntList",
    "OptionalInt",
    "Tensor",
    "boolean",
    "int_list",
    "integer",
    "optional_int",
    "schema_of",
    "tensor",
]


@dataclass(frozen=True)
class Tensor:
    """A tensor argument: sizes, a dtype and (when ``ordered``) a dim order.

    ``output``: the tensor the kernel writes, whose declared sizes it resizes (the rank
    is what the call gives; the sizes are the kernel's to compute). ``ordered``: False
    for a tensor read contiguously whatever its order (a bias), whose JSON form has no
    dim order. ``optional``: the argument may be absent (``null``).
    """

    name: str
    optional: bool = False
    ordered: bool = True
    output: bool = False


@dataclass(frozen=True)
class IntList:
    """An int64 list, any length: ``simplest`` is the element a person would write,
    ``low`` the smallest valid one."""

    name: str
    simplest: int
    low: int


@dataclass(frozen=True)
class Int:
    """An int64 scalar."""

    name: str
    simplest: int
    low: int


@dataclass(frozen=True)
class OptionalInt:
    """An int64 scalar or absent (``null``, the simplest)."""

    name: str
    simplest: int
    low: int


@dataclass(frozen=True)
class Bool:
    name: str
    simplest: bool = False


Arg = Tensor | IntList | Int | OptionalInt | Bool

_KEY = "convcheck.schema"


def _declare(kind: type, **details: Any) -> Any:
    return dataclasses.field(metadata={_KEY: (kind, details)})


def tensor(*, optional: bool = False, ordered: bool = True, output: bool = False) -> Any:
    return _declare(Tensor, optional=optional, ordered=ordered, output=output)


def int_list(*, simplest: int, low: int) -> Any:
    return _declare(IntList, simplest=simplest, low=low)


def integer(*, simplest: int, low: int) -> Any:
    return _declare(Int, simplest=simplest, low=low)


def optional_int(*, simplest: int, low: int) -> Any:
    return _declare(OptionalInt, simplest=simplest, low=low)


def boolean(*, simplest: bool = False) -> Any:
    return _declare(Bool, simplest=simplest)


@functools.cache
def schema_of(case_type: type) -> tuple[Arg, ...]:
    """The arguments of ``case_type``, in its fields' order."""
    args = []
    for f in dataclasses.fields(case_type):
        assert _KEY in f.metadata, (
            f"{case_type.__name__}.{f.name}: declared without convcheck.schema"
        )
        kind, details = f.metadata[_KEY]
        args.append(kind(f.name, **details))
    return tuple(args)
