"""A *case*: one call of an op's kernel, as a frozen value with a JSON form.

The JSON form is the project's lingua franca (corpus, ``explain``, ``judge``, external
tools): an object with one field per argument of the op, in the kernel's order, tensors
as ``{"sizes": [...], "dim_order": [...], "dtype": "float32"}`` (or ``null`` where the
argument is optional). Each op's case type declares its arguments
(``convcheck.schema``); ``convcheck/ops/convolution/case.py`` has the first.

A case only has to be a call the tensor library could *represent*: sizes in the 32-bit
size type, a dim order that is a permutation, a known dtype, int64 arguments. Whether the
kernel should accept it is for the judges to say.

The format takes what a person would write: a contiguous ``dim_order`` spelled out (also
for a tensor read contiguously, whose only order that is), and, in Python, sizes as any
sequence of integers (``torch.Size``, a list, numpy integers), kept as a tuple of ``int``.
"""

from __future__ import annotations

import functools
import json
import operator
from dataclasses import Field, dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar, Self, TypeGuard, overload

from convcheck.errors import InvalidCase, value_repr
from convcheck.files import parse_json
from convcheck.fixedint import INT32_MAX, INT64_MAX, INT64_MIN
from convcheck.schema import Arg, Bool, Int, IntList, OptionalInt, Tensor, schema_of

# Element sizes in bytes, in the order ExecuTorch's ScalarType lists them.
DTYPE_SIZES = {
    "uint8": 1,
    "int8": 1,
    "int16": 2,
    "int32": 4,
    "int64": 8,
    "float16": 2,
    "float32": 4,
    "float64": 8,
    "bool": 1,
    "bfloat16": 2,
}
DTYPES = tuple(DTYPE_SIZES)
# ExecuTorch's kTensorDimensionLimit: no tensor has more dims than this.
MAX_RANK = 16
MAX_SIZE = INT32_MAX


@functools.cache
def contiguous_order(rank: int) -> tuple[int, ...]:
    return tuple(range(rank))


@functools.cache
def channels_last_order(rank: int) -> tuple[int, ...]:
    """[0, 2, ..., rank-1, 1]: the channel dim moves innermost."""
    if rank < 2:
        return contiguous_order(rank)
    return (0, *range(2, rank), 1)


class _Rank:
    """``TensorSpec.rank`` of a spec that does not hold it (pickled before it did, as the
    solver's cache keeps cases): computed, then kept as the spec's own attribute."""

    @overload
    def __get__(self, spec: None, owner: type | None = None) -> _Rank: ...

    @overload
    def __get__(self, spec: TensorSpec, owner: type | None = None) -> int: ...

    def __get__(self, spec: TensorSpec | None, owner: type | None = None) -> _Rank | int:
        if spec is None:
            return self
        rank = spec.__dict__["rank"] = len(spec.sizes)
        return rank


@dataclass(frozen=True, init=False)
class TensorSpec:
    sizes: tuple[int, ...]
    dtype: str = "float32"
    dim_order: tuple[int, ...] | None = None  # None: contiguous

    # Written as ``convcheck.frozen`` writes one (the instance's dict, not a call of
    # ``object.__setattr__`` per field), by hand since it reads its arguments first: a
    # campaign makes four specs a case, and the calls per field were most of a spec's cost.
    def __init__(
        self,
        sizes: tuple[int, ...],
        dtype: str = "float32",
        dim_order: tuple[int, ...] | None = None,
    ) -> None:
        sizes = _ints(sizes, "sizes")
        if dim_order is not None:
            dim_order = _ints(dim_order, "dim_order")
            # One value per layout: an explicit contiguous order is the default order.
            if dim_order == contiguous_order(len(sizes)):
                dim_order = None
        fields = self.__dict__
        fields["sizes"] = sizes
        fields["dtype"] = dtype
        fields["dim_order"] = dim_order
        # Not a field: read some sixteen times a case, an attribute costs no call.
        fields["rank"] = len(sizes)

    rank = _Rank()

    @property
    def order(self) -> tuple[int, ...]:
        return self.dim_order if self.dim_order is not None else contiguous_order(self.rank)

    @property
    def numel(self) -> int:
        n = 1
        for s in self.sizes:
            n *= s
        return n

    def to_json(self, with_order: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {"sizes": list(self.sizes)}
        if with_order:
            out["dim_order"] = list(self.order)
        out["dtype"] = self.dtype
        return out


class Case:
    """A call of an op: the base of every op's case type (``convcheck.schema`` says how
    an op declares its fields). The JSON form, validation and ``replace`` are the same
    for every op, read off its schema."""

    # The op this is a call of (its name in ``convcheck.registry``), set by each op's case
    # type.
    OP: str

    if TYPE_CHECKING:
        # Every op's case type is a dataclass (``convcheck.frozen``), so ``replace`` applies.
        __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        # Annotated: mypy does not take a class for the Hashable that a cached function wants.
        case_type: type = type(self)
        for arg in schema_of(case_type):
            value = getattr(self, arg.name)
            if isinstance(arg, Tensor):
                value = None if value is None else value.to_json(with_order=arg.ordered)
            elif isinstance(arg, IntList):
                value = list(value)
            out[arg.name] = value
        return out

    def tensors(self) -> list[TensorSpec]:
        """The call's tensors in its schema's order, an absent optional one left out."""
        case_type: type = type(self)  # as in to_json
        found = (getattr(self, arg.name) for arg in schema_of(case_type) if isinstance(arg, Tensor))
        return [spec for spec in found if spec is not None]

    def integers(self) -> list[int]:
        """The call's int64 values (its int lists' elements, its ints), in its schema's
        order; an absent optional int left out."""
        values: list[int] = []
        case_type: type = type(self)  # as in to_json
        for arg in schema_of(case_type):
            value = getattr(self, arg.name)
            if isinstance(arg, IntList):
                values += value
            elif isinstance(arg, Int | OptionalInt) and value is not None:
                values.append(value)
        return values

    def dumps(self) -> str:
        return json.dumps(self.to_json(), sort_keys=False)

    def replace(self, **changes: Any) -> Self:
        return replace(self, **changes)

    @classmethod
    def from_json(cls, data: Any) -> Self:
        """A call of this op from decoded JSON; a malformed one raises ``InvalidCase``.
        (A call of an op named at run time: ``convcheck.registry.case_from_json``.)"""
        obj = _expect_object(data, "case")
        case_type: type = cls  # as in to_json
        args = schema_of(case_type)
        _reject_unknown(obj, "case", tuple(arg.name for arg in args))
        return cls(**{arg.name: _argument(obj, arg) for arg in args})

    @classmethod
    def loads(cls, text: str | bytes, source: str = "case") -> Self:
        """A case from JSON text; every error message starts with ``source``."""
        data = parse_json(text, source, InvalidCase)
        try:
            return cls.from_json(data)
        except InvalidCase as e:
            raise InvalidCase(f"{source}: {e}") from None


def _argument(obj: dict[str, Any], arg: Arg) -> Any:
    """One argument of a case, read and checked as its schema says. An optional int left
    out is absent (``null``): a field added to an op later reads its older cases."""
    if isinstance(arg, OptionalInt) and arg.name not in obj:
        return None
    value = _field(obj, arg.name, "case")
    if isinstance(arg, Tensor):
        if value is None and arg.optional:
            return None
        return _tensor(value, arg.name, ordered=arg.ordered)
    if isinstance(arg, IntList):
        if not isinstance(value, list):
            raise InvalidCase(f"{arg.name}: expected a list of int64, got {value_repr(value)}")
        return tuple(_int64(v, f"{arg.name}[{i}]") for i, v in enumerate(value))
    if isinstance(arg, Bool):
        if not isinstance(value, bool):
            raise InvalidCase(f"{arg.name}: expected true or false, got {value_repr(value)}")
        return value
    if isinstance(arg, OptionalInt) and value is None:
        return None
    return _int64(value, arg.name)


def _ints(values: Any, name: str) -> tuple[int, ...]:
    """Sizes or a dim order built in Python: any sequence of integers, as a tuple of int."""
    try:
        return tuple(map(operator.index, values))
    except TypeError:
        raise InvalidCase(
            f"TensorSpec.{name}: expected integers, got {value_repr(values)}"
        ) from None


def _expect_object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InvalidCase(f"{where}: expected a JSON object, got {value_repr(value)}")
    return value


def _reject_unknown(obj: dict[str, Any], where: str, known: tuple[str, ...]) -> None:
    for key in obj:
        if key not in known:
            name = key if isinstance(key, str) and key.isidentifier() else value_repr(key)
            raise InvalidCase(f"{where}.{name}: unknown field (known: {', '.join(known)})")


def _field(obj: dict[str, Any], name: str, where: str) -> Any:
    if name not in obj:
        raise InvalidCase(f"{where}.{name}: missing")
    return obj[name]


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _int64(value: Any, where: str) -> int:
    if not _is_int(value) or not INT64_MIN <= value <= INT64_MAX:
        raise InvalidCase(f"{where}: expected an int64, got {value_repr(value)}")
    return value


def _tensor(value: Any, name: str, ordered: bool) -> TensorSpec:
    obj = _expect_object(value, name)
    _reject_unknown(obj, name, ("sizes", "dim_order", "dtype"))
    sizes = _field(obj, "sizes", name)
    if not isinstance(sizes, list) or len(sizes) > MAX_RANK:
        raise InvalidCase(
            f"{name}.sizes: expected a list of at most {MAX_RANK} sizes, got {value_repr(sizes)}"
        )
    for i, s in enumerate(sizes):
        if not _is_int(s) or not 0 <= s <= MAX_SIZE:
            raise InvalidCase(
                f"{name}.sizes[{i}]: expected an integer in 0..{MAX_SIZE}, got {value_repr(s)}"
            )
    dtype = _field(obj, "dtype", name)
    if not isinstance(dtype, str) or dtype not in DTYPE_SIZES:
        raise InvalidCase(
            f"{name}.dtype: unknown dtype {value_repr(dtype)} (known: {', '.join(DTYPES)})"
        )
    order = obj.get("dim_order")
    if order is not None:
        if (
            not isinstance(order, list)
            or not all(_is_int(d) for d in order)
            or sorted(order) != list(range(len(sizes)))
        ):
            raise InvalidCase(
                f"{name}.dim_order: expected a permutation of 0..{len(sizes) - 1}, "
                f"got {value_repr(order)}"
            )
        order = tuple(order)
        # A bias is read in its contiguous order: spelled out, that order is no error.
        if not ordered and order != contiguous_order(len(sizes)):
            raise InvalidCase(
                f"{name}.dim_order: a {name} is read contiguously, so only "
                f"{list(contiguous_order(len(sizes)))} is allowed, got {value_repr(list(order))}"
            )
    return TensorSpec(tuple(sizes), dtype, order)
