"""What "simpler" means for a case: one home, for every place that keeps the simplest.

A case is simpler when its tensors hold fewer elements and dims and its integers are
smaller (``complexity``); where two cases tie, a choice that must not depend on the
order they came in (a merge of corpora) breaks the tie by the case's JSON (``sort_key``),
and a campaign by which came first.

One integer is simpler the nearer it is to the value a person writes, its schema's
``simplest`` (``value_key``: the shrinker's moves); the solver's minimal witness weighs
its sizes by ``size_cost`` and its integers by their distance from ``simplest_values``.
Everything is read off the op's schema (``convcheck.schema``): no op's parameter is named.
"""

from __future__ import annotations

from convcheck.case import Case
from convcheck.schema import Int, IntList, OptionalInt, schema_of


def complexity(case: Case) -> int:
    """Bigger tensors, more dims and larger integers make a case harder to read."""
    tensors = case.tensors()
    ints = case.integers()
    return (
        sum(t.numel for t in tensors)
        + 4 * sum(t.rank for t in tensors)
        + sum(abs(v).bit_length() for v in ints)
    )


def sort_key(case: Case) -> tuple[int, str]:
    """``complexity``, then the JSON text: the same order whatever order cases come in."""
    return complexity(case), case.dumps()


def value_key(v: int, simplest: int, low: int) -> tuple[bool, int, bool]:
    """One integer: valid (``low`` or above) before invalid, then nearer ``simplest``,
    then above it before below."""
    return (v < low, abs(v - simplest), v < simplest)


def simplest_values(case_type: type) -> dict[str, int]:
    """Each integer argument's simplest value (of an int list: of each element)."""
    return {
        arg.name: arg.simplest
        for arg in schema_of(case_type)
        if isinstance(arg, IntList | Int | OptionalInt)
    }


def size_cost(size: int) -> int:
    """A tensor size as a reader weighs it: 1 is free, an empty dim unusual, n costs n."""
    return 0 if size == 1 else 1 if size == 0 else size
