"""The witness a person would write, found without ``Optimize`` where it can be.

A site's witness is the smallest input of its path by two costs, compared in turn: the
elements (a size of 1 costs nothing, 0 costs 1, n > 1 costs n), then the arguments'
distance from what a person writes when they do not matter (the schema's ``simplest``,
``Inputs.natural``). z3's
``Optimize`` finds it, but slowly on these nonlinear paths.

Here the path's own input is shrunk in Python (``concrete.py`` evaluates the path's
conditions): one variable at a time, to a cheaper value that keeps every condition, until
none is left; then one plain solver query asks for an input cheaper than that. Unsatisfiable
is the proof that no input of the path is cheaper: the answer ``Optimize`` would give, by
cost. A satisfiable answer is shrunk in turn, and the queries bisect the cost between the
cheapest input found and what is proven, for the elements and then for the arguments.
Where a query runs out of its steps (``limits.SHRINK``), the cheapest input found so far
is the witness: on ``legacy`` that is 2 of 27, where ``Optimize`` had run out too and
kept the path's input (CHANGELOG.md, the third round).
"""

from __future__ import annotations

import z3

from convcheck.fixedint import INT32_MAX, INT64_MAX, INT64_MIN
from convcheck.simplicity import size_cost
from convcheck.solver import concrete, limits
from convcheck.solver.concrete import Assignment

# Every value within this distance of the natural one is tried, cheapest first.
_SMALL = 8
# The widths' edges: the powers of two, their negatives, and their neighbours.
_EDGES = tuple(s * 2**k + e for k in range(1, 64) for s in (1, -1) for e in (-1, 0, 1))


def cost(inputs, values: dict[str, int]) -> tuple[int, int]:
    """(elements, distance of the arguments from their natural values) of an input."""
    sizes = sum(size_cost(values.get(_name(s), 0)) for s in _sizes(inputs))
    args = sum(abs(values.get(_name(v), 0) - inputs.natural[n]) for n, v in _ints(inputs))
    return sizes, args


def _name(term) -> str:
    return term.decl().name()


def _sizes(inputs):
    return [s for terms in inputs.sizes.values() for s in terms]


def _ints(inputs):
    return [(name, v) for name, terms in inputs.ints.items() for v in terms]


def objectives(inputs) -> tuple[z3.ArithRef, z3.ArithRef]:
    """``cost`` as z3 terms, for ``Optimize`` and for the query that proves a minimum."""
    size = z3.Sum([z3.If(s == 1, 0, z3.If(s == 0, 1, s)) for s in _sizes(inputs)])
    value = z3.Sum([z3.Abs(v - inputs.natural[name]) for name, v in _ints(inputs)])
    return size, value


def smallest(inputs, conditions, start: Assignment, rlimit: int = limits.SHRINK):
    """The cheapest input meeting ``conditions`` (a path's decisions and a site's
    condition), from ``start``, which meets them. Returns (the input, proven): proven
    when the solver showed that nothing is cheaper; otherwise the cheapest input found
    before a query ran out of steps."""
    try:
        functions = [concrete.compiled(c) for c in (*conditions, *inputs.domain)]
    except concrete.Unsupported:
        return start, False
    names: list[tuple[str, int | None]] = [(_name(s), None) for s in _sizes(inputs)]
    names += [(_name(v), inputs.natural[n]) for n, v in _ints(inputs)]
    values = _shrink({name: start.values.get(name, 0) for name, _ in names}, names, functions)
    fixed: list[z3.BoolRef] = []
    for index, term in enumerate(objectives(inputs)):
        # Bisection on this cost, the earlier ones held at their least: the first query
        # asks for one less than the shrunk input's (most are proven at once), the next
        # ones halve the distance to what is proven.
        least, first = 0, True
        while least < cost(inputs, values)[index]:
            now = cost(inputs, values)[index]
            bound = now - 1 if first else least + (now - least) // 2
            first = False
            cheaper = limits.solver(rlimit)
            cheaper.add(*inputs.domain, *conditions, *fixed, term <= bound)
            answer = cheaper.check()
            if answer == z3.unsat:
                least = bound + 1
            elif answer == z3.sat:
                found = Assignment.of(cheaper.model()).values
                values = _shrink({name: found.get(name, 0) for name, _ in names}, names, functions)
            else:
                return Assignment(values), False
        fixed.append(term == cost(inputs, values)[index])
    return Assignment(values), True


def _shrink(values: dict[str, int], names, functions) -> dict[str, int]:
    """Each variable in turn to the cheapest value that keeps every condition, until no
    variable has a cheaper one (a local minimum: the solver looks beyond it)."""
    others = sorted(set(values.values()))
    changed = True
    while changed:
        changed = False
        for name, natural in names:
            for value in _cheaper(values[name], natural, others):
                trial = {**values, name: value}
                if concrete.meets(functions, trial):
                    values, changed = trial, True
                    break
            else:
                continue
            # A threshold (the least value whose product overflows): halve the distance left.
            values = _lowest(values, name, natural, functions)
    return values


def _own(value: int, natural: int | None) -> int:
    return size_cost(value) if natural is None else abs(value - natural)


def _cheaper(value: int, natural: int | None, others: list[int]):
    """Values cheaper than ``value``, cheapest first: the natural ones, the small ones,
    powers of two (the widths' edges) and the other variables' values."""
    centre = 1 if natural is None else natural
    small = [centre + d for d in range(-_SMALL, _SMALL + 1)]
    pool = {v for v in (*small, *_EDGES, *others, value // 2, value - 1, value + 1)}
    if natural is None:
        pool = {v for v in pool if 0 <= v <= INT32_MAX}
    else:
        pool = {v for v in pool if INT64_MIN <= v <= INT64_MAX}
    mine = _own(value, natural)
    return sorted((v for v in pool if _own(v, natural) < mine), key=lambda v: (_own(v, natural), v))


def _lowest(values, name, natural, functions) -> dict[str, int]:
    """Binary search between the natural value and this one, for the cheapest value that
    keeps every condition (where they hold on one side of a threshold)."""
    centre = 1 if natural is None else natural
    good = values[name] - centre
    bad = 0
    while abs(good - bad) > 1:
        middle = bad + (good - bad) // 2
        trial = {**values, name: centre + middle}
        if concrete.meets(functions, trial):
            good = middle
        else:
            bad = middle
    trial = {**values, name: centre + good}
    if _own(centre + good, natural) < _own(values[name], natural) and concrete.meets(
        functions, trial
    ):
        return trial
    return values
