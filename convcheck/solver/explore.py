"""Every path of a revision's steps, for every shape of call: the sites each path meets.

What is symbolic and what is enumerated. The integers a call carries are symbolic: every
size of every tensor the kernel reads (0..2^31-1), every element of every int list and
every int (int64). The structure is enumerated concretely, because the model branches on
it in plain Python and it has few values that matter: a *shape* (the op's, through its
``solver_shapes``: ``convcheck.registry.Solvable``) gives each tensor's rank and dtype (or its
absence), each list's length, each bool, and pins what the shape never reads. The
symbolic variables are derived from the shape through the op's schema, so nothing here
names a parameter of any op.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import z3

from convcheck import model, registry
from convcheck.case import TensorSpec, contiguous_order
from convcheck.errors import ConvcheckError
from convcheck.fixedint import INT32_MAX, INT64_MAX, INT64_MIN, Op
from convcheck.outcome import ACCEPT
from convcheck.registry import SYMBOLIC
from convcheck.schema import Bool, Int, IntList, OptionalInt, Tensor, schema_of
from convcheck.simplicity import simplest_values
from convcheck.solver import limits
from convcheck.solver.symbolic import (
    EXACT_DIFFERS,
    NUMEL_OVERFLOW,
    Halt,
    Path,
    Pending,
    SiteQuery,
    Symbolic,
    SymInt,
)
from convcheck.steps import ModelRun, run_steps


class Shape(Protocol):
    """The concrete part of a call, given by its op: the solver makes the rest.

    ``skeleton`` maps each argument of the op's schema to: a ``TensorSkeleton`` (None:
    an optional tensor left out); a list's length (its elements symbolic) or a tuple
    (pinned); for an int, ``SYMBOLIC`` or its pinned value; a bool's value. ``kind``
    names the family of calls in a site's label; ``work`` sorts the shapes that take
    longest first; ``key`` names the shape in a cache entry."""

    @property
    def op(self) -> str: ...

    @property
    def rank(self) -> int: ...

    @property
    def kind(self) -> str: ...

    @property
    def work(self) -> tuple: ...

    @property
    def key(self) -> str: ...

    def skeleton(self) -> Mapping[str, Any]: ...

    def describe(self) -> str: ...


def _solvable(op: str) -> registry.Solvable:
    solvable = registry.get(op)
    if not isinstance(solvable, registry.Solvable):
        raise ConvcheckError(f"op={op!r} gives the solver no shapes (solver_shapes)")
    return solvable


def shapes(revision: str, ranks=None, op: str = registry.DEFAULT_OP) -> list[Shape]:
    """Every shape of ``revision``'s calls of ``op``, or those of ``ranks``."""
    return list(_solvable(op).solver_shapes(revision, ranks))


def default_ranks(revision: str, op: str = registry.DEFAULT_OP) -> tuple[int, ...]:
    """The ranks ``prove`` solves when no ``--rank`` is given."""
    return _solvable(op).default_ranks(revision)


@dataclass(frozen=True)
class SymbolicTensor:
    """What the model reads of a tensor (a ``TensorSpec`` holds only concrete sizes)."""

    sizes: tuple
    dtype: str = "float32"

    @property
    def rank(self) -> int:
        return len(self.sizes)

    @property
    def order(self) -> tuple[int, ...]:
        return contiguous_order(self.rank)


class SymbolicCase:
    """What the model reads of a call: the op's arguments, integers symbolic."""

    def __init__(self, **arguments: Any) -> None:
        self.__dict__.update(arguments)


@dataclass
class Inputs:
    """The symbolic variables of one shape, with their names and domains."""

    shape: Shape
    sizes: dict[str, list[z3.ArithRef]]  # tensor name -> size terms
    ints: dict[str, list[z3.ArithRef]]  # argument name -> element terms (an int: one)
    domain: list[z3.BoolRef]
    # What the shape fixes: bools, ints and lists it pins, absent tensors (None).
    pinned: dict[str, Any] = field(default_factory=dict)
    # Each int's value a person writes when it does not matter (the schema's simplest).
    natural: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, shape: Shape) -> Inputs:
        """The shape's variables, in a z3 context of their own: each unit of solving (a
        shape's paths, a witness) starts from one, so its answers are its own."""
        limits.fresh_context()
        skeleton = shape.skeleton()
        sizes: dict[str, list[z3.ArithRef]] = {}
        ints: dict[str, list[z3.ArithRef]] = {}
        pinned: dict[str, Any] = {}
        case_type: type = registry.get(shape.op).case_type  # as in Case.to_json
        schema = schema_of(case_type)
        for arg in schema:
            given = skeleton[arg.name]
            if isinstance(arg, Tensor):
                if given is not None and not arg.output:
                    sizes[arg.name] = [z3.Int(f"{arg.name}.sizes[{i}]") for i in range(given.rank)]
            elif isinstance(arg, IntList):
                # A pinned list's variables are made and dropped all the same: z3 numbers
                # its terms in order, reusing a dropped one's number, and its choices
                # follow the numbers; so a shape's witnesses do not change with what it pins.
                length = len(given) if isinstance(given, tuple) else given
                ints[arg.name] = [z3.Int(f"{arg.name}[{i}]") for i in range(length)]
                if isinstance(given, tuple):
                    ints[arg.name], pinned[arg.name] = [], given
            elif isinstance(arg, Int | OptionalInt) and given == SYMBOLIC:
                ints[arg.name] = [z3.Int(arg.name)]
            else:
                assert isinstance(arg, Bool | Int | OptionalInt)
                pinned[arg.name] = given
        domain = [z3.And(s >= 0, s <= INT32_MAX) for terms in sizes.values() for s in terms]
        domain += [z3.And(v >= INT64_MIN, v <= INT64_MAX) for terms in ints.values() for v in terms]
        return cls(shape, sizes, ints, domain, pinned, simplest_values(case_type))

    def unpin(self) -> None:
        """Make the pinned lists' elements variables: for a check path that reads what
        the op's steps never do (torch's)."""
        for name, values in self.pinned.items():
            if isinstance(values, tuple) and not self.ints.get(name):
                terms = [z3.Int(f"{name}[{i}]") for i in range(len(values))]
                self.ints[name] = terms
                self.domain += [z3.And(v >= INT64_MIN, v <= INT64_MAX) for v in terms]

    def terms(self) -> list[z3.ArithRef]:
        return [t for group in (self.sizes, self.ints) for terms in group.values() for t in terms]

    def _arguments(self, value, tensor) -> dict[str, Any]:
        """The call's arguments, each integer variable read by ``value``, each tensor
        (its sizes and dtype) made by ``tensor``."""
        skeleton = self.shape.skeleton()
        arguments: dict[str, Any] = {}
        case_type: type = registry.get(self.shape.op).case_type  # as in Case.to_json
        for arg in schema_of(case_type):
            name, given = arg.name, skeleton[arg.name]
            if isinstance(arg, Tensor):
                if given is None:
                    arguments[name] = None
                elif arg.output:
                    arguments[name] = tensor((1,) * given.rank, given.dtype)
                else:
                    arguments[name] = tensor(tuple(map(value, self.sizes[name])), given.dtype)
            elif self.ints.get(name):
                terms = tuple(map(value, self.ints[name]))
                arguments[name] = terms if isinstance(arg, IntList) else terms[0]
            elif name in self.pinned:
                arguments[name] = self.pinned[name]
            else:
                arguments[name] = ()  # a list the shape gives no element
        return arguments

    def symbolic_case(self, path: Path) -> SymbolicCase:
        return SymbolicCase(**self._arguments(lambda term: SymInt(term, path), SymbolicTensor))

    def concrete_case(self, m: z3.ModelRef):
        """The call an assignment of the variables stands for (the op's case type)."""

        def value(term):
            return m.eval(term, model_completion=True).as_long()

        return registry.get(self.shape.op).case_type(**self._arguments(value, TensorSpec))


@dataclass
class PathResult:
    """One explored path: its branch choices, its site queries, and how it ended."""

    inputs: Inputs
    taken: tuple[bool, ...]
    queries: list[SiteQuery]
    run: ModelRun | None  # None when the path ended in undefined behaviour
    halt: Halt | None
    unknown_branches: int
    # The C values the path computed, by site (``Op.result`` holds a ``SymInt``): what a
    # query about a value the path computed before it halted reads.
    trace: list[Op] = field(default_factory=list)
    forks: tuple[int, ...] = ()  # where it forked off the shape's first path (``Pending``)

    def describe(self) -> str:
        return describe_path(self.inputs.shape, self.taken)


def describe_path(shape: Shape, taken: tuple[bool, ...]) -> str:
    return f"{shape.describe()}, branches {''.join('TF'[not t] for t in taken) or '-'}"


def ask_accepted(path: Path, run: ModelRun, shape: Shape) -> None:
    """At an accepting path's end: can exact arithmetic give other sizes than C's? Can
    the output's element count (the product of C's sizes) exceed int64?"""
    # SymInts, or ints where C's value is a constant: the model's code runs on either.
    out_sizes: tuple[Any, ...] | None = run.outcome.out_sizes
    assert out_sizes is not None  # an acceptance's
    sizes = [s for s in out_sizes if isinstance(s, SymInt)]
    differs = z3.Or([s.term != s.ideal for s in sizes]) if sizes else z3.BoolVal(False)
    kind = shape.kind
    path.misbehaves(differs, (f"accepted.out_sizes ({kind})", EXACT_DIFFERS, None, ""), False)
    terms = [s.term if isinstance(s, SymInt) else z3.IntVal(s) for s in out_sizes]
    numel = z3.Product(terms) if terms else z3.IntVal(1)
    path.misbehaves(
        numel > INT64_MAX, (f"accepted.numel ({kind})", NUMEL_OVERFLOW, None, ""), False
    )


def explore(
    revision: str,
    shape: Shape,
    rlimit: int = limits.QUERY,
    max_paths: int = 100_000,
    stack: list[Pending] | None = None,
) -> Iterator[PathResult]:
    """Run the revision's steps once per feasible path of ``shape``, depth first.

    ``stack``: the pending paths to explore, the next one last (``prove``'s units of a
    shape), empty for the shape's first path; what is left after ``max_paths`` paths
    stays in the list."""
    steps = model.revision_named(revision, shape.op)
    inputs = Inputs.of(shape)
    stack = [] if stack is None else stack
    if not stack:
        seed = limits.solver(limits.QUERY)
        seed.add(*inputs.domain)
        seed.check()
        stack.append(Pending((), seed.model()))
    count = 0
    found: list[z3.ModelRef] = []
    while stack and count < max_paths:
        pending = stack.pop()
        path = Path(
            inputs.domain, pending.prefix, pending.model, rlimit, found=found, forks=pending.forks
        )
        case = inputs.symbolic_case(path)
        run, halt, arith = None, None, Symbolic(path)
        try:
            run = run_steps(case, steps, arith)
        except Halt as h:
            halt = h
        if run is not None and run.outcome.verdict == ACCEPT:
            ask_accepted(path, run, shape)
        count += 1
        yield PathResult(
            inputs,
            tuple(path.taken),
            path.queries,
            run,
            halt,
            path.unknown_branches,
            arith.trace,
            path.forks,
        )
        # Depth first: the branch found last is nearest the leaf.
        stack.extend(path.pending)
