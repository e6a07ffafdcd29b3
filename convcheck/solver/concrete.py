"""z3 terms evaluated over plain Python ints: a query tried on an input without z3.

z3's own ``model.eval`` crosses its C API for every node; a path's decisions are a few
hundred nodes, and the solver tries many inputs per query (earlier answers, the near
inputs of ``nearby``). A term is compiled once into a Python function of the variables'
values (one line per shared sub-term), kept on its z3 context, and evaluated with the
integers' exact semantics (z3's ``div`` and ``mod`` are Euclidean). An input on which a
term divides by zero does not satisfy it: z3 would give that division any value, so no
answer is claimed from it.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

import z3

from convcheck.fixedint import INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN

# z3 operators and the Python expression each becomes.
_NARY = {
    z3.Z3_OP_ADD: " + ",
    z3.Z3_OP_SUB: " - ",
    z3.Z3_OP_MUL: " * ",
    z3.Z3_OP_AND: " and ",
    z3.Z3_OP_OR: " or ",
}
_BINARY = {
    z3.Z3_OP_LE: "<=",
    z3.Z3_OP_LT: "<",
    z3.Z3_OP_GE: ">=",
    z3.Z3_OP_GT: ">",
    z3.Z3_OP_EQ: "==",
    z3.Z3_OP_DISTINCT: "!=",
    z3.Z3_OP_IDIV: "_div",
    z3.Z3_OP_MOD: "_mod",
}


class Undefined(Exception):
    """A division by zero: z3 leaves its value open."""


def _div(x: int, y: int) -> int:
    if y == 0:
        raise Undefined
    return x // y if y > 0 else -(x // -y)


def _mod(x: int, y: int) -> int:
    return x - y * _div(x, y)


class Unsupported(Exception):
    """A term with an operator this evaluator does not know: ask z3."""


def compiled(term: z3.ExprRef):
    """``term`` as a function of a dict of variable values (missing ones are 0, as z3's
    model completion makes them)."""
    function = getattr(term, "_convcheck_compiled", None)
    if function is not None:  # the same Python object asked again (a path's decisions)
        return function
    # Per context: z3 numbers its terms per context, and a kept term keeps its number.
    cache = term.ctx.__dict__.setdefault("_convcheck_compiled", {})
    key = term.get_id()
    found = cache.get(key)
    if found is None:
        # By the term's text across contexts: each of prove's units and witnesses has a
        # context of its own, and their paths meet the same decisions (compiling them again
        # in every unit made five times as many compilations on legacy).
        text = term.sexpr()
        function = _BY_TEXT.get(text)
        if function is None:
            function = _BY_TEXT[text] = _compile(term)
        found = (term, function)  # the term kept alive: its id is not reused
        cache[key] = found
    term._convcheck_compiled = found[1]
    return found[1]


# Every term compiled in this process, by its SMT-LIB text (which names the variables).
_BY_TEXT: dict[str, object] = {}


def _compile(term: z3.ExprRef):
    names: dict[int, str] = {}
    variables: set[str] = set()
    lines: list[str] = []
    stack = [(term, False)]
    while stack:
        node, ready = stack.pop()
        key = node.get_id()
        if key in names:
            continue
        children = node.children()
        if not ready:
            stack.append((node, True))
            stack.extend((c, False) for c in children if c.get_id() not in names)
            continue
        name = f"v{len(names)}"
        if z3.is_const(node) and node.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            variables.add(node.decl().name())
        lines.append(f"    {name} = {_expression(node, [names[c.get_id()] for c in children])}")
        names[key] = name
    source = "def f(env):\n" + "\n".join(lines) + f"\n    return {names[term.get_id()]}\n"
    scope: dict[str, Any] = {"_div": _div, "_mod": _mod}
    exec(compile(source, "<z3 term>", "exec"), scope)  # noqa: S102 - our own generated code
    function = scope["f"]
    function.variables = tuple(sorted(variables))
    return function


def _expression(node: z3.ExprRef, args: list[str]) -> str:
    if z3.is_int_value(node):
        return str(node.as_long())
    if z3.is_true(node) or z3.is_false(node):
        return str(z3.is_true(node))
    kind = node.decl().kind()
    if kind == z3.Z3_OP_UNINTERPRETED and not args:
        return f"env.get({node.decl().name()!r}, 0)"
    if kind in _NARY and args:
        return "(" + _NARY[kind].join(args) + ")"
    if kind in (z3.Z3_OP_IDIV, z3.Z3_OP_MOD) and _positive_constant(node.arg(1)):
        # A wrap's modulo by 2^N (most of a query's work): Euclidean and floored division
        # agree for a positive divisor, so Python's own operators, without a call.
        return f"({args[0]} {'//' if kind == z3.Z3_OP_IDIV else '%'} {args[1]})"
    if kind in _BINARY and len(args) == 2:
        op = _BINARY[kind]
        return (
            f"{op}({args[0]}, {args[1]})" if op.startswith("_") else f"({args[0]} {op} {args[1]})"
        )
    if kind == z3.Z3_OP_UMINUS and len(args) == 1:
        return f"(-{args[0]})"
    if kind == z3.Z3_OP_NOT and len(args) == 1:
        return f"(not {args[0]})"
    if kind == z3.Z3_OP_ITE and len(args) == 3:
        return f"({args[1]} if {args[0]} else {args[2]})"
    if kind == z3.Z3_OP_IMPLIES and len(args) == 2:
        return f"((not {args[0]}) or {args[1]})"
    raise Unsupported(str(node.decl()))


def _positive_constant(node: z3.ExprRef) -> bool:
    return z3.is_int_value(node) and node.as_long() > 0


def value(term: z3.ExprRef, env: dict[str, int]):
    """The term's value (int or bool); raises ``Undefined`` or ``Unsupported``."""
    return compiled(term)(env)


def holds(conditions, env: dict[str, int]) -> bool:
    """Every condition is true on ``env`` (in order: put the likeliest to fail first, the
    ones after it are not even looked up)."""
    try:
        return all(compiled(c)(env) for c in conditions)
    except (Undefined, Unsupported):
        return False


class Assignment:
    """An input as the values of the shape's variables: what a z3 model stands for, read
    without z3 (``eval`` answers as a model does, for the code that reads models)."""

    __slots__ = ("values",)

    def __init__(self, values: dict[str, int]) -> None:
        self.values = values

    @classmethod
    def of(cls, model: z3.ModelRef) -> Assignment:
        values = {}
        for d in model.decls():
            if d.arity() == 0 and z3.is_int_value(model[d]):
                values[d.name()] = model[d].as_long()
        return cls(values)

    def eval(self, term: z3.ExprRef, model_completion: bool = True) -> z3.ExprRef:
        try:
            result = value(term, self.values)
        except (Undefined, Unsupported):
            pairs = [(z3.Int(n, term.ctx), z3.IntVal(v, term.ctx)) for n, v in self.values.items()]
            return z3.simplify(z3.substitute(term, *pairs))
        if isinstance(result, bool):
            return z3.BoolVal(result, term.ctx)
        return z3.IntVal(result, term.ctx)

    def holds(self, conditions) -> bool:
        return holds(conditions, self.values)


# What C's edge cases are made of: the values a person tries first, and the ones next to
# the widths' limits (a product past int32 or int64, a size_t wrap).
EDGES: tuple[int, ...] = (
    0,
    1,
    2,
    3,
    -1,
    INT32_MAX,
    2**31,
    2**30,
    2**32,
    2**31 + 1,
    INT32_MIN,
    2**16,
    2**62,
)
EDGES += (INT64_MAX, INT64_MIN)
# Two variables changed at once take their values from the first few only.
_PAIRED = EDGES[:6]


def nearby(start: Assignment, wanted, conditions, repairs: int = 0) -> Assignment | None:
    """An input meeting ``wanted`` and ``conditions``, found by changing one or two of the
    variables ``wanted`` reads in ``start`` (which meets ``conditions``, a path's
    decisions) to an edge value, a neighbour of its own, or another variable's value.
    Most of a path's satisfiable queries are a step away from its input, and a z3 answer
    costs thousands of times what a candidate does. With ``repairs``, that many
    of the candidates that meet ``wanted`` but break a condition get one more change, to
    a variable of the first condition they break. None when nothing fits (the solver
    decides)."""
    try:
        wanted = [compiled(c) for c in wanted]
        conditions = [compiled(c) for c in conditions]
    except Unsupported:
        return None
    values = start.values
    others = sorted(set(values.values()))
    names = sorted({n for f in wanted for n in f.variables})
    reading = _Reading(conditions)
    broken: list[tuple[tuple[str, ...], dict[str, int], Any]] = []
    for changed, candidate in _candidates(values, names, others):
        if meets(wanted, candidate):
            failed = reading.first_failed(changed, candidate)
            if failed is None:
                return Assignment(candidate)
            if len(broken) < repairs:
                broken.append((changed, candidate, failed))
    for changed, candidate, failed in broken:
        for more, repaired in _candidates(candidate, list(failed.variables), others, pairs=False):
            changed_too = (*changed, *more)
            if meets(wanted, repaired) and reading.first_failed(changed_too, repaired) is None:
                return Assignment(repaired)
    return None


class _Reading:
    """A path's conditions by the variables they read: a candidate that changes a few
    variables of an input meeting every condition can break only the ones reading
    them (a hundred conditions a path, a thousand candidates a query)."""

    def __init__(self, conditions) -> None:
        self.conditions = conditions
        self.by_name: dict[str, list[int]] = {}
        for position, f in enumerate(conditions):
            for name in f.variables:
                self.by_name.setdefault(name, []).append(position)
        self.touched: dict[tuple[str, ...], list] = {}

    def first_failed(self, changed: tuple[str, ...], env: dict[str, int]):
        """The first condition ``env`` breaks, in the conditions' order; None when it
        meets them all (checked on all of them, so no answer rests on the start)."""
        key = tuple(sorted(set(changed)))
        touched = self.touched.get(key)
        if touched is None:
            positions = sorted({p for name in key for p in self.by_name.get(name, ())})
            touched = self.touched[key] = [self.conditions[p] for p in positions]
        failed = _first_failed(touched, env)
        if failed is None:
            return _first_failed(self.conditions, env)
        return failed


def _candidates(values: dict[str, int], names: list[str], others: list[int], pairs=True):
    """(the names changed, the changed input)."""
    for name in names:
        v = values.get(name, 0)
        for x in (*EDGES, v + 1, v - 1, 2 * v, v // 2, *others):
            if x != v:
                yield (name,), {**values, name: x}
    if pairs:
        for a, b in combinations(names, 2):
            for x in _PAIRED:
                for y in _PAIRED:
                    yield (a, b), {**values, a: x, b: y}


def meets(functions, env: dict[str, int]) -> bool:
    try:
        return all(f(env) for f in functions)
    except Undefined:
        return False


def _first_failed(functions, env: dict[str, int]):
    for f in functions:
        try:
            if not f(env):
                return f
        except Undefined:
            return f
    return None
