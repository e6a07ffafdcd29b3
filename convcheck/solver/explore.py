"""Every path of a revision's steps, for every shape of call: the sites each path meets.

What is symbolic and what is enumerated. The integers a call carries are symbolic: every
size (0..2^31-1) and every int64 argument (stride, padding, dilation, output_padding
elements, groups). The structure is enumerated concretely, because the model branches on
it in plain Python and it has few values that matter: the rank (3, 4, and 5 where the
revision accepts it), transposed or not, and the bias (absent, a real dtype, bool).
Parameter lists have one element per spatial dim: a list of length 1 applies its one
value to every dim, which is the same arithmetic with the elements equal, so it adds no
path; other lengths, dtype mismatches, non-contiguous dim orders and a bool input are
rejected before any arithmetic, or (bool input) just before the loops, and add no site.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import z3

from convcheck import model
from convcheck.case import TensorSpec, contiguous_order
from convcheck.fixedint import INT32_MAX, INT64_MAX, INT64_MIN, Op
from convcheck.model.steps import ModelRun, run_steps
from convcheck.ops.convolution.case import ConvolutionCase
from convcheck.outcome import ACCEPT
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

# Where an input that passes a check has no bias, transposed or spatial dims to spare,
# the witness is easier to read: configurations go simplest first.
BIAS_KINDS = (None, "float32", "bool")


@dataclass(frozen=True)
class Shape:
    """The concrete part of a call: the solver makes the rest."""

    rank: int
    transposed: bool
    bias: str | None  # None, or the bias dtype

    @property
    def ndim(self) -> int:
        return self.rank - 2

    def describe(self) -> str:
        bias = "no bias" if self.bias is None else f"{self.bias} bias"
        kind = "transposed" if self.transposed else "regular"
        return f"rank {self.rank} {kind}, {bias}"


def shapes(revision: str, ranks=None) -> list[Shape]:
    """Every shape of ``revision``'s calls, or those of ``ranks``."""
    modelled = (3, 4, 5) if revision != "legacy" else (3, 4)
    return [
        Shape(rank, transposed, bias)
        for rank in modelled
        if ranks is None or rank in ranks
        for bias in BIAS_KINDS
        for transposed in (False, True)
    ]


def default_ranks(revision: str) -> tuple[int, ...]:
    """The ranks ``prove`` solves when no ``--rank`` is given: every rank ``current``
    accepts (its proof is the point), and ``legacy``'s rank 3, where every crash,
    overflow and ordering class of ``known_bugs.py`` has its witness (its rank-4
    shapes add no class and take minutes each)."""
    return (3,) if revision == "legacy" else (3, 4, 5)


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


@dataclass(frozen=True)
class SymbolicCase:
    """What the model reads of a call: a ``Case`` with symbolic integers."""

    input: SymbolicTensor
    weight: SymbolicTensor
    bias: SymbolicTensor | None
    out: SymbolicTensor
    stride: tuple
    padding: tuple
    dilation: tuple
    transposed: bool
    output_padding: tuple
    groups: SymInt


@dataclass
class Inputs:
    """The symbolic variables of one shape, with their names and domains."""

    shape: Shape
    sizes: dict[str, list[z3.ArithRef]]  # tensor name -> size terms
    ints: dict[str, list[z3.ArithRef]]  # argument name -> element terms (groups: one)
    domain: list[z3.BoolRef]

    @classmethod
    def of(cls, shape: Shape) -> Inputs:
        """The shape's variables, in a z3 context of their own: each unit of solving (a
        shape's paths, a witness) starts from one, so its answers are its own."""
        limits.fresh_context()
        n = shape.ndim
        sizes = {
            "input": [z3.Int(f"input.sizes[{i}]") for i in range(shape.rank)],
            "weight": [z3.Int(f"weight.sizes[{i}]") for i in range(shape.rank)],
        }
        if shape.bias is not None:
            sizes["bias"] = [z3.Int("bias.sizes[0]")]
        ints = {name: [z3.Int(f"{name}[{i}]") for i in range(n)] for name in _LISTS}
        if not shape.transposed:
            ints["output_padding"] = []  # a regular convolution never reads it
        ints["groups"] = [z3.Int("groups")]
        domain = [z3.And(s >= 0, s <= INT32_MAX) for terms in sizes.values() for s in terms]
        domain += [z3.And(v >= INT64_MIN, v <= INT64_MAX) for terms in ints.values() for v in terms]
        return cls(shape, sizes, ints, domain)

    def terms(self) -> list[z3.ArithRef]:
        return [t for group in (self.sizes, self.ints) for terms in group.values() for t in terms]

    def symbolic_case(self, path: Path) -> SymbolicCase:
        def sym(term):
            return SymInt(term, path)

        def tensor(name):
            return SymbolicTensor(tuple(sym(s) for s in self.sizes[name]))

        shape = self.shape
        bias = None
        if shape.bias is not None:
            bias = SymbolicTensor((sym(self.sizes["bias"][0]),), shape.bias)
        return SymbolicCase(
            input=tensor("input"),
            weight=tensor("weight"),
            bias=bias,
            out=SymbolicTensor((1,) * shape.rank),
            transposed=shape.transposed,
            groups=sym(self.ints["groups"][0]),
            **{name: tuple(sym(t) for t in self.ints[name]) for name in _LISTS},
        )

    def concrete_case(self, m: z3.ModelRef) -> ConvolutionCase:
        """The call an assignment of the variables stands for."""

        def value(term):
            return m.eval(term, model_completion=True).as_long()

        shape = self.shape
        bias = None
        if shape.bias is not None:
            bias = TensorSpec((value(self.sizes["bias"][0]),), shape.bias)
        output_padding = self.ints["output_padding"] or [z3.IntVal(0)] * shape.ndim
        lists = {name: tuple(value(t) for t in self.ints[name]) for name in _LISTS}
        lists["output_padding"] = tuple(value(t) for t in output_padding)
        return ConvolutionCase(
            input=TensorSpec(tuple(value(s) for s in self.sizes["input"])),
            weight=TensorSpec(tuple(value(s) for s in self.sizes["weight"])),
            bias=bias,
            out=TensorSpec((1,) * shape.rank),
            transposed=shape.transposed,
            groups=value(self.ints["groups"][0]),
            **lists,
        )


_LISTS = ("stride", "padding", "dilation", "output_padding")


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
    kind = "transposed" if shape.transposed else "regular"
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
    steps = model.revision_named(revision)
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
