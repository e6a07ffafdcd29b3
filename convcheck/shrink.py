"""Shrink a case to a local minimum that keeps a finding's signature.

Design rules, after Hypothesis' shrinker:

* Passes are explicit, named and deterministic. Each tries candidates built from the
  current case, simplest first; a candidate that keeps the signature becomes the current
  case at once. Rounds over all passes repeat until none makes progress.
* Keeping the *signature*, not just "some finding", is what stops a shrink from sliding
  from one bug to another.
* Simplest means simplest *valid*: every argument moves toward the value a person would
  write, as the op's schema says it (``convcheck.schema``: an integer's ``simplest``,
  sizes 1, no optional argument, a flag at its simplest, float32, contiguous), so a
  minimised case is wrong in the one way that matters and in no other. A value outside
  the valid range (below the schema's ``low``) is simpler the nearer it is to it.
* An integer tries one or two special values first (its simplest valid value, then the
  nearest invalid one), then one step toward them; if that step keeps (or the value is
  small), ``find_integer`` searches outward from the simplest value (a probe that doubles
  its distance, then bisection) for the nearest value that keeps. A wide value that
  cannot move costs one call; a threshold at 2^62 costs about 125, not one call per
  candidate on the way.
* Three passes escape local minima where integers are tied together, as Hypothesis does
  for duplicated and related choices: equal integers anywhere in the case (a tensor's
  size that must match another's) move as one; a size is lowered while a wide integer is
  raised to its extreme (a product that must overflow: a size of 3 times an integer of
  3074457345618258603 becomes 2 times 2^62 once the integer passes take the integer down
  again); and a large size is lowered while an int-list value is raised as far as the
  signature allows (698369 channels times a length of 3075 become 2 channels and a
  length near 2^30 that a raised value gives). Ties the schema cannot show are the op's
  own passes (``Op.shrink_passes``), each run after the core's pass it names.
* Every pass counts its calls and its shrinks. After each round, passes that have never
  shrunk anything move to the end, so the budget goes to the passes that work.
* The budget (calls, seconds) is checked before each candidate: a slow judge or a long
  pass cannot overrun it. What was reached so far is kept.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from convcheck import registry
from convcheck.case import Case, TensorSpec
from convcheck.fixedint import INT32_MAX, INT64_MAX, INT64_MIN
from convcheck.schema import Bool, Int, IntList, OptionalInt, Tensor, schema_of
from convcheck.simplicity import value_key as _simplicity

__all__ = ["Keeps", "ShrinkPass", "Shrinker", "find_integer", "minimize", "with_size"]

Keeps = Callable[[list[Case]], list[bool]]

# Values this near their target are searched even when one step toward it fails.
_SMALL = 64


def find_integer(f: Callable[[int], bool]) -> int:
    """An ``n`` with ``f(n)`` true and ``f(n + 1)`` false; ``f(0)`` is taken as true.

    Tries 1, 2, 4, 8, ... until ``f`` fails, then bisects between the last success and
    the first failure: about ``2 * log2(n)`` calls, and one call when ``f(1)`` fails.
    Where ``f`` is not monotone the answer is a local one, which is all a shrinker needs.
    """
    lo, hi = 0, 1
    while f(hi):
        lo, hi = hi, 2 * hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if f(mid):
            lo = mid
        else:
            hi = mid
    return lo


@dataclass(frozen=True)
class _Slot:
    """One integer of a case: its value, what it shrinks toward, and how to replace it."""

    value: int
    target: int  # the simplest valid value
    low: int  # the smallest valid value
    put: Callable[[Case, int], Case]  # the case with this integer replaced

    def key(self, v: int) -> tuple[bool, int, bool]:
        return _simplicity(v, self.target, self.low)

    def specials(self) -> list[int]:
        """The target, then the invalid value nearest the valid range; each only when it
        is simpler than the value it would replace."""
        return [v for v in (self.target, self.low - 1) if self.key(v) < self.key(self.value)]


def with_size(t: TensorSpec, d: int, v: int) -> TensorSpec:
    """``t`` with its size ``d`` set to ``v``."""
    return TensorSpec(t.sizes[:d] + (v,) + t.sizes[d + 1 :], t.dtype, t.dim_order)


def _put_size(case: Case, v: int, name: str, d: int) -> Case:
    return case.replace(**{name: with_size(getattr(case, name), d, v)})


def _put_list(case: Case, v: int, name: str, i: int) -> Case:
    values = getattr(case, name)
    return case.replace(**{name: values[:i] + (v,) + values[i + 1 :]})


def _put_int(case: Case, v: int, name: str) -> Case:
    return case.replace(**{name: v})


def _args(case: Case, *kinds: type) -> list[Any]:
    case_type: type = type(case)  # as in Case.to_json
    return [arg for arg in schema_of(case_type) if isinstance(arg, kinds)]


def _tensors(case: Case) -> list[str]:
    """The names of the case's tensors, an absent optional one left out."""
    return [arg.name for arg in _args(case, Tensor) if getattr(case, arg.name) is not None]


def _size_slots(case: Case) -> list[_Slot]:
    """Every tensor size; 1 is the simplest, and an empty dim counts as unusual."""
    return [
        _Slot(size, 1, 1, partial(_put_size, name=name, d=d))
        for name in _tensors(case)
        for d, size in enumerate(getattr(case, name).sizes)
    ]


def _list_slots(case: Case) -> list[_Slot]:
    """Every value of every int list."""
    return [
        _Slot(v, arg.simplest, arg.low, partial(_put_list, name=arg.name, i=i))
        for arg in _args(case, IntList)
        for i, v in enumerate(getattr(case, arg.name))
    ]


def _int_slots(case: Case) -> list[_Slot]:
    """Every int, and every optional int that is present."""
    return [
        _Slot(value, arg.simplest, arg.low, partial(_put_int, name=arg.name))
        for arg in _args(case, Int, OptionalInt)
        if (value := getattr(case, arg.name)) is not None
    ]


def _equal_slots(case: Case) -> list[_Slot]:
    """Equal integers moved as one: where a call's checks want two of its integers equal
    (a size that must match another tensor's), neither can move alone (Hypothesis
    shrinks duplicated choices together)."""
    alike: dict[tuple[int, int, int], list[_Slot]] = {}
    for slot in _size_slots(case) + _list_slots(case) + _int_slots(case):
        if slot.value != slot.target:
            alike.setdefault((slot.value, slot.target, slot.low), []).append(slot)
    return [
        _Slot(value, target, low, partial(_put_all, slots=tuple(slots)))
        for (value, target, low), slots in alike.items()
        if len(slots) > 1
    ]


def _put_all(case: Case, v: int, slots: tuple[_Slot, ...]) -> Case:
    for slot in slots:
        case = slot.put(case, v)
    return case


def _wide_slots(case: Case) -> list[_Slot]:
    """The integers beyond 32 bits: the factors that make a product overflow."""
    return [
        slot
        for slot in _list_slots(case) + _int_slots(case)
        if abs(slot.value - slot.target) > INT32_MAX
    ]


def _large_slots(case: Case) -> list[_Slot]:
    """The sizes, alone or moved as one, too far from 1 for a search to be cheap."""
    return [
        slot
        for slot in _size_slots(case) + _equal_slots(case)
        if abs(slot.value - slot.target) > _SMALL
    ]


@dataclass
class ShrinkPass:
    """A named pass and what it has cost and achieved so far."""

    name: str
    run: Callable[[], None] = field(repr=False)
    calls: int = 0
    shrinks: int = 0

    def describe(self) -> str:
        return f"{self.name:<18} {self.calls:>5} calls {self.shrinks:>4} shrinks"


class _OutOfBudget(Exception):
    pass


class Shrinker:
    """``Shrinker(keeps, max_evaluations, seconds).shrink(case)``; afterwards ``passes``
    holds each pass's calls and shrinks, in the order the passes ended up in."""

    def __init__(
        self, keeps: Keeps, max_evaluations: int = 3000, seconds: float | None = None
    ) -> None:
        self.keeps = keeps
        self.evaluations = 0
        self.max_evaluations = max_evaluations
        # Some candidates are slow to judge (torch computing a large call): a time budget
        # keeps one finding from holding up the rest.
        self.deadline = None if seconds is None else time.monotonic() + seconds
        # Any: an op's own passes read its arguments by name (the case of ``shrink``).
        self.current: Any = None
        # Only failures are remembered: a kept candidate becomes the current case, and no
        # pass proposes a case less simple than the current one.
        self._rejected: set[Case] = set()
        # Built for the op of the case ``shrink`` is given: the core's passes and the op's.
        self.passes: list[ShrinkPass] = []

    def shrink(self, case: Case) -> Case:
        self.current = case
        self.passes = self._passes(registry.op_of(case))
        try:
            while True:
                start = self.current
                for shrink_pass in self.passes:
                    self._running = shrink_pass
                    shrink_pass.run()
                if self.current == start:
                    break
                # A stable sort: the order stays as written, except that passes which have
                # never shrunk anything wait until the useful ones are done.
                self.passes.sort(key=lambda p: p.shrinks == 0)
        except _OutOfBudget:
            pass
        return self.current

    def _passes(self, op: registry.Op) -> list[ShrinkPass]:
        """The core's passes in their order, each followed by the op's that name it."""
        core = (
            self.drop_optionals,
            self.simplest_flags,
            self.contiguous_layouts,
            self.float32_everywhere,
            self.list_lengths,
            self.shrink_sizes,
            self.shrink_lists,
            self.shrink_ints,
            self.shrink_duplicates,
            self.trade,
            self.trade_for_lists,
        )
        unknown = set(op.shrink_passes) - {method.__name__ for method in core}
        assert not unknown, f"{op.name}'s shrink passes follow no pass of the core: {unknown}"
        passes = []
        for method in core:
            passes.append(ShrinkPass(method.__name__, method))
            passes += [
                ShrinkPass(extra.__name__, partial(extra, self))
                for extra in op.shrink_passes.get(method.__name__, ())
            ]
        return passes

    def consider(self, candidate: Case) -> bool:
        """Does ``candidate`` keep the signature? If so it becomes the current case."""
        if candidate == self.current:
            return True
        if not self._probe(candidate):
            return False
        self.current = candidate
        self._running.shrinks += 1
        return True

    def _spend(self) -> None:
        """Count one call to ``keeps``, or end the shrink when the budget is spent."""
        if self.evaluations >= self.max_evaluations or (
            self.deadline is not None and time.monotonic() > self.deadline
        ):
            raise _OutOfBudget
        self.evaluations += 1
        self._running.calls += 1

    def first_kept(self, candidates: list[Case]) -> bool:
        """Is one of ``candidates`` kept? The first that is becomes the current case."""
        return any(self.consider(c) for c in candidates)

    def _shrink_integers(self, slots_of: Callable[[Case], list[_Slot]]) -> None:
        i = 0
        # Re-read the slots from the current case each time: earlier ones may have moved.
        while i < len(slots := slots_of(self.current)):
            self._shrink_integer(slots[i])
            i += 1

    def _shrink_integer(self, slot: _Slot, base: Case | None = None) -> None:
        """Move one integer of ``base`` (the current case) toward its target."""
        base = self.current if base is None else base
        if self.first_kept([slot.put(base, v) for v in slot.specials()]):
            return
        toward = 1 if slot.target > slot.value else -1
        distance = abs(slot.value - slot.target)
        if distance < 2:
            return  # the only move is the target, a special already tried
        # One step first, so that a wide value that cannot move costs a single call. A
        # small one is searched whatever the step says: divisibility makes neighbours
        # fail where smaller values keep (a size of 6 that an int of 2 must divide: 5
        # fails, 2 keeps).
        if not self.consider(slot.put(base, slot.value + toward)) and distance > _SMALL:
            return
        # Then search outward from the target for the nearest value that keeps. Searching
        # from this side, most probes fail, and a failure is cheap: a kept candidate may
        # be a sanitized crash, which costs a worker restart.
        find_integer(
            lambda d: (
                d < distance - 1 and not self.consider(slot.put(base, slot.target - toward * d))
            )
        )

    # -- passes --------------------------------------------------------------------
    def drop_optionals(self) -> None:
        """Leave out each optional argument (a tensor, an int) that is there."""
        for arg in _args(self.current, Tensor, OptionalInt):
            optional = arg.optional if isinstance(arg, Tensor) else True
            if optional and getattr(self.current, arg.name) is not None:
                self.consider(self.current.replace(**{arg.name: None}))

    def simplest_flags(self) -> None:
        """Set each flag that is not at its simplest value (its schema's) to it."""
        for arg in _args(self.current, Bool):
            if getattr(self.current, arg.name) != arg.simplest:
                self.consider(self.current.replace(**{arg.name: arg.simplest}))

    def contiguous_layouts(self) -> None:
        self._all_then_each(
            lambda t: t.dim_order is not None, lambda t: TensorSpec(t.sizes, t.dtype, None)
        )

    def float32_everywhere(self) -> None:
        self._all_then_each(
            lambda t: t.dtype != "float32", lambda t: TensorSpec(t.sizes, "float32", t.dim_order)
        )

    def _all_then_each(
        self, applies: Callable[[TensorSpec], bool], change: Callable[[TensorSpec], TensorSpec]
    ) -> None:
        case = self.current
        names = [n for n in _tensors(case) if applies(getattr(case, n))]
        if not names:
            return
        everything = case.replace(**{n: change(getattr(case, n)) for n in names})
        if self.consider(everything) or len(names) == 1:
            return
        for n in names:
            self.consider(self.current.replace(**{n: change(getattr(self.current, n))}))

    def list_lengths(self) -> None:
        """One value for all dims (length 1 is always valid), else one element fewer while
        the length is wrong anyway (``Op.list_length`` says which length is right)."""
        for arg in _args(self.current, IntList):
            case = self.current
            values = getattr(case, arg.name)
            if len(values) == 1:
                continue
            singles = sorted(
                {arg.simplest, *values}, key=lambda v: _simplicity(v, arg.simplest, arg.low)
            )
            candidates = [case.replace(**{arg.name: (v,)}) for v in singles]
            length = registry.op_of(case).list_length(case)
            if length is not None and len(values) != length:
                candidates += [
                    case.replace(**{arg.name: values[:i] + values[i + 1 :]})
                    for i in range(len(values))
                ]
            self.first_kept(candidates)

    def shrink_sizes(self) -> None:
        self._shrink_integers(_size_slots)

    def shrink_lists(self) -> None:
        self._shrink_integers(_list_slots)

    def shrink_ints(self) -> None:
        self._shrink_integers(_int_slots)

    def shrink_duplicates(self) -> None:
        self._shrink_integers(_equal_slots)

    def trade(self) -> None:
        """Lower a size while raising a wide integer to its extreme.

        A product that must overflow leaves each factor at a local minimum: with an int
        at 3074457345618258603, a size that multiplies it cannot go from 3 to 2. With the
        int at its extreme it can, and ``shrink_ints`` then takes the int down to 2^62:
        the small factor small and the big one round, as a person writes them.
        """
        for j in range(len(_wide_slots(self.current))):
            for i in range(len(_size_slots(self.current))):
                wide, size = _wide_slots(self.current)[j], _size_slots(self.current)[i]
                extreme = INT64_MAX if wide.value > wide.target else INT64_MIN
                if size.value != size.target and wide.value != extreme:
                    self._shrink_integer(size, base=wide.put(self.current, extreme))

    def trade_for_lists(self) -> None:
        """Lower a large size (or equal sizes moved as one) while raising an int list's
        value as far as the signature allows.

        An output's strides overflow int32 when its channels times its length do: a
        campaign meets that with 698369 channels and a length of 3075, and neither moves
        alone. With a value that lengthens the output raised until the length nearly
        leaves int32, two channels keep the overflow; ``shrink_lists`` then takes the
        value down again to what two channels need.
        """
        for j in range(len(_list_slots(self.current))):
            large = _large_slots(self.current)
            if not large:
                return
            raised = self._furthest(_list_slots(self.current)[j])
            for stuck in large:
                before = self.current
                self._shrink_integer(stuck, base=raised)
                if self.current != before:
                    break

    def _furthest(self, slot: _Slot) -> Case:
        """The current case with ``slot`` raised as far as it keeps the signature, up to
        INT32_MAX (beyond it ``trade`` takes over): the bound itself first, then a
        search (probes double, then bisect; a local furthest). The probes do not become
        the current case: they are less simple than it."""
        base = self.current
        if slot.value >= INT32_MAX:
            return base
        if self._probe(slot.put(base, INT32_MAX)):
            return slot.put(base, INT32_MAX)

        def keeps(d: int) -> bool:
            return slot.value + d < INT32_MAX and self._probe(slot.put(base, slot.value + d))

        return slot.put(base, slot.value + find_integer(keeps))

    def _probe(self, candidate: Case) -> bool:
        """Does ``candidate`` keep the signature? Asked once: failures are remembered."""
        if candidate in self._rejected:
            return False
        self._spend()
        if self.keeps([candidate])[0]:
            return True
        self._rejected.add(candidate)
        return False


def minimize(
    case: Case, keeps: Keeps, max_evaluations: int = 3000, seconds: float | None = None
) -> Case:
    """The public entry: ``keeps(cases) -> [bool]`` says which still show the finding."""
    return Shrinker(keeps, max_evaluations, seconds).shrink(case)
