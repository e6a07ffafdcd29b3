"""The third arithmetic: the model's C values as z3 terms, its branches as forks.

A ``SymInt`` is a z3 integer term: the value a C variable of some width holds, exactly as
the model's plain ints are (an ``int32_t`` size, an ``int64_t`` argument, a ``size_t`` in
0..2^64-1). Comparing two of them gives a ``SymBool``; the moment the model's own code
asks a ``SymBool`` for its truth (``if``, ``and``, ``any``), the ``Path`` decides it:
replaying a forced prefix of decisions, else following the concrete input the path was
started from, and remembering the other side, when the solver finds it feasible, as a new
path to run (re-execution, depth first: concolic testing as CrossHair and SAGE do it).

``Symbolic`` is an ``Arith``. Where C's result leaves the width (undefined behaviour, a
narrowing, an unsigned wrap), it forks the same way: that question, asked of the path so
far, *is* the solver's query for the site, so its answer is the site's status on this
path (``SiteQuery``): a witness input, proven impossible, or unknown. A path that takes
the undefined side ends there, as the sanitized kernel does; a wrap goes on with C's
value. Nothing here knows a check: the checks are the model's steps, run unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

import z3

from convcheck.fixedint import (
    DIVISION_BY_ZERO,
    HEAP_OVERREAD,
    INT32_MAX,
    INT32_MIN,
    INT64_MAX,
    INT64_MIN,
    NULL_CALL,
    SIGNED_OVERFLOW,
    UINT64_MAX,
    Arith,
    Op,
)
from convcheck.solver import concrete, limits
from convcheck.solver.concrete import Assignment

WRAP = "value-changed"  # not UB: a narrowing or an unsigned wrap, C's value is not exact
EXACT_DIFFERS = "exact-differs"  # an accepted call whose sizes exact arithmetic changes
NUMEL_OVERFLOW = "numel-overflow"  # an accepted call whose output numel exceeds INT64_MAX
# The properties of an accepted call: not undefined behaviour, no sanitizer sees them.
PROPERTIES = (WRAP, EXACT_DIFFERS, NUMEL_OVERFLOW)


class Status(StrEnum):
    """What the solver knows of a site on a path, from best to worst (a site's status is
    its worst path's); each value is the string the solver's cache and reports use."""

    PROVEN = "proven"  # no input on this path misbehaves at the site
    UNKNOWN = "unknown"  # the solver ran out of its steps (``limits``)
    WITNESS = "witness"  # an input that reaches the site and misbehaves there


# The members by their short names, as the solver's modules import them.
PROVEN, UNKNOWN, WITNESS = Status


def _in(term, low: int, high: int) -> z3.BoolRef:
    return z3.And(term >= low, term <= high)


class Halt(Exception):
    """The path reached undefined behaviour: the sanitized kernel stops here."""

    def __init__(self, site: str, kind: str) -> None:
        super().__init__(f"{kind} at {site}")
        self.site = site
        self.kind = kind


class SymInt:
    """A C integer as a term over the integers: the value the C variable holds.

    ``ideal`` is the value the same expression has under ``Exact`` arithmetic (no wrap,
    no narrowing): where the two differ at the end of a path, C's answer is not the
    exact one (an ``overflow`` finding).
    """

    __slots__ = ("term", "path", "ideal")

    def __init__(self, term: z3.ArithRef, path: Path, ideal: z3.ArithRef | None = None) -> None:
        self.term = term
        self.path = path
        self.ideal = term if ideal is None else ideal

    def _compare(self, other, op) -> SymBool:
        right = other.term if isinstance(other, SymInt) else z3.IntVal(int(other))
        return SymBool(op(self.term, right), self.path)

    def __lt__(self, other):
        return self._compare(other, lambda a, b: a < b)

    def __le__(self, other):
        return self._compare(other, lambda a, b: a <= b)

    def __gt__(self, other):
        return self._compare(other, lambda a, b: a > b)

    def __ge__(self, other):
        return self._compare(other, lambda a, b: a >= b)

    def __eq__(self, other):
        if isinstance(other, int | SymInt):
            return self._compare(other, lambda a, b: a == b)
        return NotImplemented

    def __ne__(self, other):
        if isinstance(other, int | SymInt):
            return self._compare(other, lambda a, b: a != b)
        return NotImplemented

    __hash__ = object.__hash__

    def __index__(self) -> int:
        # The model must not turn a C value into a Python one behind the solver's back.
        raise TypeError("a symbolic C value has no concrete Python value")

    def __repr__(self) -> str:
        return f"SymInt({self.term})"

    __str__ = __repr__


class SymBool:
    """A branch condition; asking for its truth forks the path."""

    __slots__ = ("term", "path")

    def __init__(self, term: z3.BoolRef, path: Path) -> None:
        self.term = term
        self.path = path

    def __bool__(self) -> bool:
        return self.path.decide(self.term)

    def __or__(self, other):
        """C's ``||`` as one condition (the model's ``either``): one branch, not two."""
        right = other.term if isinstance(other, SymBool) else z3.BoolVal(bool(other))
        return SymBool(z3.Or(self.term, right), self.path)


@dataclass
class SiteQuery:
    """A site on one path: may C misbehave there, given the decisions before it?"""

    site: str
    kind: str  # a fixedint UB kind, or WRAP
    condition: z3.BoolRef  # the misbehaviour, on top of ``decisions``
    decisions: tuple[z3.BoolRef, ...]  # the path condition up to the site
    prefix: tuple[bool, ...]  # the branch choices that name the path
    status: Status
    witness: z3.ModelRef | None
    exact: z3.ArithRef | None  # the operation's exact value, for the width bands
    op: str  # "add", "sub", "mul", "narrow", "convert", or "" (no value)


@dataclass
class Pending:
    """The other side of a branch, still to run: a prefix and an input that takes it."""

    prefix: tuple[bool, ...]
    model: Assignment | z3.ModelRef  # a Path reads a z3 model into an Assignment
    # Where each path from the shape's first one to this one forked off its parent: the
    # order of the depth-first search, whichever process explores the path (``fork_order``).
    forks: tuple[int, ...] = ()


@dataclass
class Path:
    """One run of the model: its decisions, the sites it met, the branches it left."""

    domain: list[z3.BoolRef]
    forced: tuple[bool, ...]
    model: Assignment  # the path's input (a z3 model is read into one)
    rlimit: int  # z3's steps per query (``limits``)
    decisions: list[z3.BoolRef] = field(default_factory=list)
    taken: list[bool] = field(default_factory=list)
    queries: list[SiteQuery] = field(default_factory=list)
    pending: list[Pending] = field(default_factory=list)
    unknown_branches: int = 0
    solver: z3.Solver | None = None
    # Inputs found for earlier queries of the same shape, newest last, shared by its paths.
    found: list[Assignment] = field(default_factory=list)
    forks: tuple[int, ...] = ()  # the path's ``Pending.forks``
    wrapped_size_t: bool = False  # a value of the path was taken modulo 2^64 (``check``)

    def __post_init__(self) -> None:
        if not isinstance(self.model, Assignment):
            self.model = Assignment.of(self.model)

    def check(self, *extra: z3.BoolRef) -> tuple[z3.CheckSatResult, Assignment | None]:
        """The cheapest answer first (docs/solver.md, "the cheapest answer first"):

        - an input found earlier that meets the query (a counterexample cache, as in KLEE);
        - an input one or two changes away from the path's own (``concrete.nearby``);
        - a fresh solver with a few steps (``limits.QUICK``): every unsatisfiable query
          and most satisfiable ones are answered within them;
        - ``nearby`` again, repairing a broken decision with one more change;
        - on a path that wrapped a value modulo 2^64 (``size_t``), a fresh solver
          without Groebner bases (``limits.NO_GROEBNER_FIRST``);
        - one incremental solver per path (its decisions only grow, so a query is a push
          of ``extra`` on what it learnt); then fresh ones: without Groebner bases
          (``limits.NO_GROEBNER``), then with them and the full steps, and last the
          same query alone, read into a z3 context of its own.
        """
        wanted = (*self.decisions, *extra)
        # The query's own condition first: most earlier inputs fail it, and then no
        # decision of the path needs evaluating.
        ordered = (*extra, *self.decisions)
        for model in reversed(self.found[-_REUSED:]):
            if model.holds(ordered):
                return z3.sat, model
        conditions = (*self.domain, *self.decisions)
        near = concrete.nearby(self.model, extra, conditions)
        if near is not None:
            return z3.sat, self._found(near)
        quick = limits.solver(min(self.rlimit, limits.QUICK))
        quick.add(*self.domain, *wanted)
        answer = quick.check()
        if answer != z3.unknown:
            return answer, self._found(quick.model() if answer == z3.sat else None)
        near = concrete.nearby(self.model, extra, conditions, _REPAIRS)
        if near is not None:
            return z3.sat, self._found(near)
        if self.wrapped_size_t:
            # On legacy's size_t paths this tier answers most of what reaches it in a
            # fraction of the incremental solver's time; on current's rank-5 paths (no
            # size_t) it cost more than it saved (CHANGELOG.md, the fifth round).
            answer, found = self._fresh(wanted, limits.NO_GROEBNER_FIRST, groebner=False)
            if answer != z3.unknown:
                return answer, self._found(found)
        if self.solver is None:
            self.solver = limits.solver(min(self.rlimit, limits.INCREMENTAL))
            self.solver.add(*self.domain, *self.decisions)
        self.solver.push()
        self.solver.add(*extra)
        answer = self.solver.check()
        found = self.solver.model() if answer == z3.sat else None
        self.solver.pop()
        if answer == z3.unknown:
            # An incremental solver cannot preprocess (solve equations, drop unconstrained
            # terms), which some of these nonlinear queries need: fresh ones get a try,
            # first without Groebner bases (``limits.NO_GROEBNER``), then with them.
            answer, found = self._fresh(wanted, limits.NO_GROEBNER, groebner=False)
            if answer == z3.unknown:
                answer, found = self._fresh(wanted, self.rlimit)
            if answer == z3.unknown:
                answer, found = self._fresh(wanted, self.rlimit, alone=True)
        return answer, self._found(found)

    def _fresh(self, wanted, rlimit: int, groebner: bool = True, alone: bool = False):
        fresh = limits.solver(min(self.rlimit, rlimit), groebner)
        fresh.add(*self.domain, *wanted)
        if alone:
            # The same query read into a context of its own: z3's search follows the ids
            # of the terms a context made before, and a query that ran out of steps among
            # a path's terms may not alone (one branch of legacy's did so).
            text = fresh.sexpr()
            fresh = limits.solver(min(self.rlimit, rlimit), groebner, z3.Context())
            fresh.from_string(text)
        answer = fresh.check()
        return answer, fresh.model() if answer == z3.sat else None

    def _found(self, found) -> Assignment | None:
        if found is None:
            return None
        if not isinstance(found, Assignment):
            found = Assignment.of(found)
        self.found.append(found)
        return found

    def decide(self, condition: z3.BoolRef) -> bool:
        """Which way a branch goes; a feasible other way is a new path to run."""
        condition = z3.simplify(condition)
        if z3.is_true(condition) or z3.is_false(condition):
            return z3.is_true(condition)
        index = len(self.taken)
        if index < len(self.forced):
            taken = self.forced[index]
        else:
            taken = self.model.holds((condition,))
            answer, found = self.check(z3.Not(condition) if taken else condition)
            if answer == z3.sat:
                self.pending.append(Pending((*self.taken, not taken), found, (*self.forks, index)))
            elif answer == z3.unknown:
                self.unknown_branches += 1
        self._take(condition if taken else z3.Not(condition), taken)
        return taken

    def _take(self, decision: z3.BoolRef, taken: bool) -> None:
        self.decisions.append(decision)
        self.taken.append(taken)
        if self.solver is not None:
            self.solver.add(decision)

    def misbehaves(self, condition: z3.BoolRef, site: tuple, halting: bool) -> bool:
        """Ask, once per path prefix, whether C can misbehave here; record the answer.

        ``halting`` (undefined behaviour): the path goes on only where C does not
        misbehave, as the sanitized kernel would; True when it cannot avoid it. A wrap
        (not halting) changes the value and the path goes on with it.
        """
        condition = z3.simplify(condition)
        new = len(self.taken) >= len(self.forced)  # else a parent run asked already
        if new:
            if z3.is_false(condition):
                self._query(site, condition, PROVEN, None)
            elif self.model.holds((condition,)):
                self._query(site, condition, WITNESS, self.model)
            else:
                answer, found = self.check(condition)
                self._query(site, condition, _STATUS.get(str(answer), UNKNOWN), found)
        if not halting or z3.is_false(condition):
            return False
        if z3.is_true(condition):
            return True
        if new and self.model.holds((condition,)):
            answer, found = self.check(z3.Not(condition))
            if answer != z3.sat:
                self.unknown_branches += answer == z3.unknown
                return True
            assert found is not None  # sat: its model
            self.model = found
        self._take(z3.Not(condition), False)
        return False

    def _query(self, site, condition, status, witness) -> None:
        name, kind, exact, op = site
        self.queries.append(
            SiteQuery(
                name,
                kind,
                condition,
                tuple(self.decisions),
                tuple(self.taken),
                status,
                witness,
                exact,
                op,
            )
        )


def fork_order(forks: tuple[int, ...]) -> tuple[int, ...]:
    """The depth-first position of the path with these ``forks``, as a sort key: a path
    before the paths forked off it, and of those, the one that forked last (nearest the
    leaf) first, as the search pops them."""
    return tuple(-i for i in forks)


# How many earlier inputs a query tries before the solver.
_REUSED = 8
# How many near inputs that meet the query but break a decision get one more change,
# where the quick solver ran out of steps.
_REPAIRS = 24
_STATUS = {str(z3.sat): WITNESS, str(z3.unsat): PROVEN}
_RANGES = {64: (INT64_MIN, INT64_MAX), 32: (INT32_MIN, INT32_MAX)}


def _signed_methods(bits: int):
    """The methods ``+``, ``-``, ``*``, unary ``-``, ``/`` and ``%`` of intN_t (N =
    ``bits``), as ``fixedint.Arith`` names them."""

    def add(self, a, b, site):
        return self._signed(site, "add", a, b, bits)

    def sub(self, a, b, site):
        return self._signed(site, "sub", a, b, bits)

    def mul(self, a, b, site):
        return self._signed(site, "mul", a, b, bits)

    def neg(self, a, site):
        return self._signed(site, "sub", 0, a, bits)

    def div(self, a, b, site):
        return self._divide(site, a, b, bits, rem=False)

    def rem(self, a, b, site):
        return self._divide(site, a, b, bits, rem=True)

    return add, sub, mul, neg, div, rem


class Symbolic(Arith):
    """C arithmetic over terms: C's result, forking where it leaves its width.

    Terms are integers, not bit-vectors: each C width is a range predicate, and a wrap is
    the exact value minus a multiple of 2^N. The solver then reasons about a product of
    two bounded values by its bounds, where a bit-blasted 64-bit multiplier or divider
    cost it seconds per branch (CHANGELOG.md has the numbers).
    """

    exact = False

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path

    def _term(self, value):
        return value.term if isinstance(value, SymInt) else z3.IntVal(value)

    def _ideal(self, value):
        return value.ideal if isinstance(value, SymInt) else z3.IntVal(value)

    def _halt_if(self, site, kind, condition, exact=None, op="") -> None:
        if self.path.misbehaves(condition, (site, kind, exact, op), halting=True):
            raise Halt(site, kind)

    def _result(self, site, text, term, ideal) -> SymInt:
        value = SymInt(z3.simplify(term), self.path, z3.simplify(ideal))
        # The trace holds a SymInt where the model's own runs hold C's int.
        self.trace.append(Op(site, text, value, ""))  # type: ignore[arg-type]
        return value

    def _exact(self, op, a, b, of=None):
        of = of or self._term
        x, y = of(a), of(b)
        return {"add": x + y, "sub": x - y, "mul": x * y}[op]

    def _signed(self, site, op, a, b, bits):
        """``a op b`` in intN_t (N = ``bits``): outside its range is UB, and the end."""
        exact = self._exact(op, a, b)
        self._halt_if(site, SIGNED_OVERFLOW, z3.Not(_in(exact, *_RANGES[bits])), exact, op)
        return self._result(site, f"{op}_i{bits}", exact, self._exact(op, a, b, self._ideal))

    def _modular(self, site, op, exact, low, high, ideal) -> SymInt:
        """C's value of ``exact`` in a type of range [low, high]: wrapped modulo its size.

        No fork: the modulo is the identity inside the range, and the solver handles a
        modulo by a constant as linear arithmetic.
        """
        self.path.misbehaves(z3.Not(_in(exact, low, high)), (site, WRAP, exact, op), False)
        self.path.wrapped_size_t |= high - low + 1 == 2**64
        return self._result(site, op, (exact - low) % (high - low + 1) + low, ideal)

    def _divide(self, site, a, b, bits, rem):
        """C's ``/`` and ``%``, rounding toward zero; ``bits`` 0 for size_t operands."""
        x, y = self._term(a), self._term(b)
        self._halt_if(site, DIVISION_BY_ZERO, y == 0)
        if bits:
            self._halt_if(site, SIGNED_OVERFLOW, z3.And(x == _RANGES[bits][0], y == -1))
        # On non-negative operands z3's division is C's; the signs are branches of their own.
        x_negative = bool(SymBool(x < 0, self.path))
        y_negative = bool(SymBool(y < 0, self.path))
        magnitude = (-x if x_negative else x) / (-y if y_negative else y)
        quotient = -magnitude if x_negative != y_negative else magnitude
        term = x - y * quotient if rem else quotient
        return self._result(site, "%" if rem else "/", term, _ideal_divide(a, b, rem, self))

    # -- signed ------------------------------------------------------------------------
    add_i64, sub_i64, mul_i64, neg_i64, div_i64, rem_i64 = _signed_methods(64)
    add_i32, sub_i32, mul_i32, neg_i32, div_i32, rem_i32 = _signed_methods(32)

    # -- unsigned ----------------------------------------------------------------------
    def add_u64(self, a, b, site):
        ideal = self._exact("add", a, b, self._ideal)
        return self._modular(site, "add", self._exact("add", a, b), 0, UINT64_MAX, ideal)

    def sub_u64(self, a, b, site):
        ideal = self._exact("sub", a, b, self._ideal)
        return self._modular(site, "sub", self._exact("sub", a, b), 0, UINT64_MAX, ideal)

    def mul_u64(self, a, b, site):
        ideal = self._exact("mul", a, b, self._ideal)
        return self._modular(site, "mul", self._exact("mul", a, b), 0, UINT64_MAX, ideal)

    def div_u64(self, a, b, site):
        return self._divide(site, a, b, 0, rem=False)

    def rem_u64(self, a, b, site):
        return self._divide(site, a, b, 0, rem=True)

    # -- conversions -------------------------------------------------------------------
    def i64_to_u64(self, a, site):
        return self._modular(site, "convert", self._term(a), 0, UINT64_MAX, self._ideal(a))

    def u64_to_i64(self, a, site):
        return self._modular(site, "narrow", self._term(a), INT64_MIN, INT64_MAX, self._ideal(a))

    def narrow_i32(self, a, site):
        return self._modular(site, "narrow", self._term(a), INT32_MIN, INT32_MAX, self._ideal(a))

    def mul_checked_i64(self, a, b, site):
        product = self._exact("mul", a, b)
        if SymBool(_in(product, INT64_MIN, INT64_MAX), self.path):
            return self._result(site, "* (checked)", product, self._exact("mul", a, b, self._ideal))
        return None

    # -- other undefined behaviour -------------------------------------------------------
    def call_null(self, site):
        self._halt_if(site, NULL_CALL, z3.BoolVal(True))

    def out_of_bounds_read(self, site, length, end):
        self._halt_if(site, HEAP_OVERREAD, z3.BoolVal(True))

    def idle_iterations(self, site, count, limit):
        """Not searched: a loop count is a product of the call's sizes, which the fuzzer
        finds and a hand witness shows (docs/checks-pooling.md)."""


def _ideal_divide(a, b, rem: bool, arith: Symbolic):
    """``Exact``'s ``/`` and ``%``: toward zero, 0 for a zero divisor; no fork, it is only
    asked about at the end of a path."""
    x, y = arith._ideal(a), arith._ideal(b)
    magnitude = z3.Abs(x) / z3.Abs(y)
    quotient = z3.If((x < 0) == (y < 0), magnitude, -magnitude)
    return z3.If(y == 0, 0, x - y * quotient if rem else quotient)
