"""C integer arithmetic as values: the wrapped result and the undefined behaviour apart.

Every operation the model performs on a C value goes through an ``Arith``. It returns
what the C expression yields and records, with the operation's *site* (a stable name
such as ``bias_len.groups_mul``), what a sanitizer or a careful reader would flag:

* undefined behaviour (``UbEvent``): signed overflow, division or remainder by zero,
  ``INT64_MIN / -1``, a call through a null function pointer; and, where a kernel's
  loops would spend more than a work limit on iterations that read nothing, the halt a
  kernel with that limit makes (not UB, a denial of service: it ends the run as UB does);
* implementation-defined conversions that change the value (``NarrowEvent``): int64 to
  int32, uint64 to int64.

Two arithmetics share the interface. ``Wrapping`` is C on a two's complement machine
(what gcc and clang do when nothing traps). ``Exact`` computes with unbounded integers:
running the same model code under both shows what the code *means* and where the
machine changed the answer. Width and signedness are in every name: ``mul_i64`` is not
``mul_u64``.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import NamedTuple

from convcheck.frozen import frozen

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
UINT64_MAX = 2**64 - 1

# The kinds of undefined behaviour, named as UBSan and ASan name them.
SIGNED_OVERFLOW = "signed-integer-overflow"
DIVISION_BY_ZERO = "division-by-zero"
NULL_CALL = "null-function-call"
HEAP_OVERREAD = "heap-buffer-overflow READ"
WORK_PAST_LIMIT = "work past limit"


@frozen
class UbEvent:
    site: str
    kind: str
    operands: tuple[int, ...]
    step: int  # index of the model step (C function) that was running

    def describe(self) -> str:
        return f"{self.kind} at {self.site} {list(self.operands)}"


@frozen
class NarrowEvent:
    site: str
    conversion: str  # "i64->i32" or "u64->i64"
    value: int
    result: int
    step: int

    def describe(self) -> str:
        return f"{self.conversion} at {self.site}: {self.value} became {self.result}"


class Op(NamedTuple):
    """One traced arithmetic step: ``explain`` prints these. (A named tuple: a run
    records one per operation, and a frozen dataclass cost twice as much to build.)

    ``operation``: the expression's ``text``, or, for a signed ``+``, ``-`` or ``*`` that
    fits, its operands and operator, ``(a, "+", b)``: writing two integers out for every
    operation of every run was a tenth of the model's time, and only ``explain`` reads
    them."""

    site: str
    operation: str | tuple[int, str, int]
    result: int
    flag: str  # "" or "UB: <kind>" or "narrowed" or "wrapped"

    @property
    def text(self) -> str:
        operation = self.operation
        if isinstance(operation, str):
            return operation
        a, symbol, b = operation
        return f"{a} {symbol} {b}"


# ``Op(...)`` without the Python frame of the named tuple's generated ``__new__``: the
# trace gets one Op per operation, the model's most frequent allocation.
_new_tuple = tuple.__new__


def _wrap(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _wrap_unsigned(value: int, bits: int) -> int:
    return value & ((1 << bits) - 1)


_SIGNED_RANGE = {32: (INT32_MIN, INT32_MAX), 64: (INT64_MIN, INT64_MAX)}


_Binary = Callable[["Arith", int, int, str], int]
_Unary = Callable[["Arith", int, str], int]


def _signed_operator(symbol: str, compute: Callable[[int, int], int], bits: int) -> _Binary:
    """The method ``a <symbol> b`` in intN_t (N = ``bits``). The model's hottest code: the
    common case, a value that fits, is recorded here; ``Arith._signed`` does the rest."""
    low, high = _SIGNED_RANGE[bits]

    def method(self: Arith, a: int, b: int, site: str) -> int:
        value = compute(a, b)
        if low <= value <= high:
            self.trace.append(_new_tuple(Op, (site, (a, symbol, b), value, "")))
            return value
        return self._signed(site, f"{a} {symbol} {b}", value, bits, a, b)

    return method


def _signed_methods(bits: int) -> tuple[_Binary, _Binary, _Binary, _Unary, _Binary, _Binary]:
    """The methods ``+``, ``-``, ``*``, unary ``-``, ``/`` and ``%`` of intN_t (N =
    ``bits``), each recording its operation under the caller's site."""

    def neg(self: Arith, a: int, site: str) -> int:
        return self._signed(site, f"-{a}", -a, bits, a)

    def div(self: Arith, a: int, b: int, site: str) -> int:
        return self._divide(site, f"{a} / {b}", a, b, bits, rem=False)

    def rem(self: Arith, a: int, b: int, site: str) -> int:
        return self._divide(site, f"{a} % {b}", a, b, bits, rem=True)

    add = _signed_operator("+", operator.add, bits)
    sub = _signed_operator("-", operator.sub, bits)
    return add, sub, _signed_operator("*", operator.mul, bits), neg, div, rem


def _trunc_div(a: int, b: int) -> int:
    """C's ``/``: the quotient rounded toward zero."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _trunc_rem(a: int, b: int) -> int:
    """C's ``%``: the remainder has the sign of the dividend."""
    return a - b * _trunc_div(a, b)


class Arith:
    """Records events and a trace; subclasses decide what a result is."""

    exact = False

    def __init__(self) -> None:
        self.ub: list[UbEvent] = []
        self.narrowing: list[NarrowEvent] = []
        self.trace: list[Op] = []
        self.step_index = -1
        # Set (by ``Wrapping`` and ``Exact`` alike) at the first operation whose exact value
        # does not fit its C type: until then the two compute the same values, events and
        # trace, so a run that never sets it is its own run under the other arithmetic.
        self.left_width = False

    # -- recording -----------------------------------------------------------------
    def _ub(self, site: str, kind: str, *operands: int) -> None:
        self.ub.append(UbEvent(site, kind, operands, self.step_index))

    def _op(self, site: str, text: str, result: int, flag: str = "") -> int:
        self.trace.append(_new_tuple(Op, (site, text, result, flag)))
        return result

    def _signed(self, site: str, text: str, exact_value: int, bits: int, *operands: int) -> int:
        low, high = _SIGNED_RANGE[bits]
        if low <= exact_value <= high:
            return self._op(site, text, exact_value)
        self.left_width = True
        self._ub(site, SIGNED_OVERFLOW, *operands)
        result = exact_value if self.exact else _wrap(exact_value, bits)
        return self._op(site, text, result, f"UB: {SIGNED_OVERFLOW}")

    def _unsigned(self, site: str, text: str, exact_value: int) -> int:
        if 0 <= exact_value <= UINT64_MAX:
            return self._op(site, text, exact_value)
        self.left_width = True
        if self.exact:
            return self._op(site, text, exact_value)
        return self._op(site, text, _wrap_unsigned(exact_value, 64), "wrapped")

    def _divide(self, site: str, text: str, a: int, b: int, bits: int, rem: bool) -> int:
        """C's ``/`` and ``%``; ``bits`` is 0 for unsigned operands (no INT_MIN / -1)."""
        low = -(1 << (bits - 1)) if bits else None
        if b == 0:
            self._ub(site, DIVISION_BY_ZERO, a, b)
            # C gives no value; the model must go on to see what follows.
            return self._op(site, text, 0, f"UB: {DIVISION_BY_ZERO}")
        if a == low and b == -1:
            self.left_width = True
            if not self.exact:
                self._ub(site, SIGNED_OVERFLOW, a, b)
                return self._op(site, text, 0 if rem else low, f"UB: {SIGNED_OVERFLOW}")
        value = _trunc_rem(a, b) if rem else _trunc_div(a, b)
        return self._op(site, text, value)

    # -- signed: int32_t and int64_t ----------------------------------------------
    add_i64, sub_i64, mul_i64, neg_i64, div_i64, rem_i64 = _signed_methods(64)
    add_i32, sub_i32, mul_i32, neg_i32, div_i32, rem_i32 = _signed_methods(32)

    # -- unsigned: uint64_t (size_t); wrapping is defined, only /0 is UB ------------
    def add_u64(self, a: int, b: int, site: str) -> int:
        return self._unsigned(site, f"{a} + {b} (size_t)", a + b)

    def sub_u64(self, a: int, b: int, site: str) -> int:
        return self._unsigned(site, f"{a} - {b} (size_t)", a - b)

    def mul_u64(self, a: int, b: int, site: str) -> int:
        return self._unsigned(site, f"{a} * {b} (size_t)", a * b)

    def div_u64(self, a: int, b: int, site: str) -> int:
        return self._divide(site, f"{a} / {b} (size_t)", a, b, 0, rem=False)

    def rem_u64(self, a: int, b: int, site: str) -> int:
        return self._divide(site, f"{a} % {b} (size_t)", a, b, 0, rem=True)

    # -- conversions ---------------------------------------------------------------
    def i64_to_u64(self, a: int, site: str) -> int:
        """The usual arithmetic conversion of an int64 operand meeting a size_t."""
        if a >= 0:
            return a
        self.left_width = True
        if self.exact:
            return a
        return self._op(site, f"(size_t){a}", _wrap_unsigned(a, 64), "wrapped")

    def u64_to_i64(self, a: int, site: str) -> int:
        """A size_t value stored into an int64: implementation-defined when too big."""
        if a <= INT64_MAX:
            return a
        self.left_width = True
        if self.exact:
            return a
        result = _wrap(a, 64)
        self.narrowing.append(NarrowEvent(site, "u64->i64", a, result, self.step_index))
        return self._op(site, f"(int64_t){a}", result, "narrowed")

    def narrow_i32(self, a: int, site: str) -> int:
        """An int64 stored into the tensor library's int32 size type."""
        if INT32_MIN <= a <= INT32_MAX:
            return a
        self.left_width = True
        result = a if self.exact else _wrap(a, 32)
        self.narrowing.append(NarrowEvent(site, "i64->i32", a, result, self.step_index))
        return self._op(site, f"(int32_t){a}", result, "narrowed")

    def mul_checked_i64(self, a: int, b: int, site: str) -> int | None:
        """``__builtin_mul_overflow`` on int64: None where the product does not fit."""
        product = a * b
        if INT64_MIN <= product <= INT64_MAX:
            return self._op(site, f"{a} * {b} (checked)", product)
        self._op(site, f"{a} * {b} (checked)", 0, "overflow caught")
        return None

    # -- other undefined behaviour -------------------------------------------------
    def call_null(self, site: str) -> None:
        """A call through a function pointer the C code left null."""
        self._ub(site, NULL_CALL)
        self._op(site, "call through a null function pointer", 0, f"UB: {NULL_CALL}")

    def out_of_bounds_read(self, site: str, length: int, end: int) -> None:
        """Reading indices [0, end) of a buffer of ``length`` elements, end > length."""
        self._ub(site, HEAP_OVERREAD, length, end)
        self._op(site, f"read [0, {end}) of {length} elements", end, f"UB: {HEAP_OVERREAD}")

    def idle_iterations(self, site: str, count: Callable[[], int], limit: int) -> None:
        """Loop iterations that read nothing, ``count()`` of them, which a kernel halts on
        past ``limit``. A count of the call, not C arithmetic: the symbolic arithmetic
        leaves it uncounted."""
        idle = count()
        if idle > limit:
            self._ub(site, WORK_PAST_LIMIT, idle, limit)
            self._op(site, f"{idle} idle iterations (limit {limit})", idle, "work past limit")


class Wrapping(Arith):
    """C on a two's complement machine: results wrap, UB is recorded beside them."""

    exact = False


class Exact(Arith):
    """Unbounded integers: what the C expression means, undisturbed by widths."""

    exact = True
