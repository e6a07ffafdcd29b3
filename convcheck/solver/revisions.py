"""Missing and over-strict checks, solved: two revisions' steps on one symbolic call.

Each path runs the steps of revision ``a`` and then of revision ``b`` on the same symbolic
inputs, so its path condition decides both; where one accepts and the other rejects, the
path's own input is a witness (no extra query: the path is feasible by construction).
With ``a = legacy`` and ``b = current`` this names every check ``legacy`` lacks
(``current`` is held to torch by the judges), e.g. a value ``legacy`` accepts and
``current`` rejects as out of its range.
Both revisions are the model's own steps: nothing is written twice.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import z3

from convcheck import model, registry
from convcheck.case import Case
from convcheck.outcome import ACCEPT
from convcheck.solver import limits
from convcheck.solver.explore import Inputs, Shape, describe_path, shapes
from convcheck.solver.prove import minimal_witness_of
from convcheck.solver.symbolic import Halt, Path, Pending, Symbolic
from convcheck.steps import run_steps


@dataclass
class Disagreement:
    """Revision ``a`` accepts where ``b`` rejects (``missing``), or the other way."""

    kind: str  # "missing-check" (a accepts) or "over-strict" (a rejects)
    check: str  # the rejecting revision's check id
    path: str
    witness: Case

    def describe(self) -> str:
        return f"{self.kind} {self.check} on {self.path}"

    def to_json(self) -> dict:
        return {
            "kind": self.kind,
            "check": self.check,
            "path": self.path,
            "witness": self.witness.to_json(),
        }


def model_side(revision: str, op: str = registry.DEFAULT_OP):
    """The revision's steps on a path: its outcome, or None where undefined behaviour
    comes first (``prove`` reports that)."""
    steps = model.revision_named(revision, op)

    def run(case, path: Path):
        arith = Symbolic(path)
        try:
            return run_steps(case, steps, arith).outcome
        except Halt:
            return None

    return run


def paired_paths(inputs: Inputs, first, second, rlimit: int) -> Iterator[tuple]:
    """Every path of ``first`` then ``second`` (each ``(case, path) -> answer``, None to
    end the path) on one symbolic call, depth first: ``(path, answer, answer)``."""
    seed = limits.solver(limits.QUERY)
    seed.add(*inputs.domain)
    seed.check()
    stack = [Pending((), seed.model())]
    found: list[z3.ModelRef] = []  # the inputs queries found, shared by the paths
    while stack:
        pending = stack.pop()
        path = Path(inputs.domain, pending.prefix, pending.model, rlimit, found=found)
        case = inputs.symbolic_case(path)
        one = first(case, path)
        other = second(case, path) if one is not None else None
        if other is not None:
            yield path, one, other
        stack.extend(path.pending)


def disagreements(
    a: str = "legacy",
    b: str = "current",
    only: list[Shape] | None = None,
    rlimit=limits.QUERY,
    op: str = registry.DEFAULT_OP,
) -> list[Disagreement]:
    """One minimised witness per (kind, check id), simplest shapes first."""
    found: dict[tuple[str, str], Disagreement] = {}
    common = [s for s in (only or shapes(a, op=op)) if s in shapes(b, op=op)]
    for shape in common:
        inputs = Inputs.of(shape)
        sides = model_side(a, shape.op), model_side(b, shape.op)
        for path, one, other in paired_paths(inputs, *sides, rlimit):
            if (one.verdict == ACCEPT) == (other.verdict == ACCEPT):
                continue
            kind, check = (
                ("missing-check", other.check)
                if one.verdict == ACCEPT
                else ("over-strict", one.check)
            )
            if (kind, check) in found:
                continue
            best = minimal_witness_of(inputs, path.decisions, z3.BoolVal(True))
            witness = inputs.concrete_case(best or path.model)
            found[(kind, check)] = Disagreement(
                kind, check, describe_path(shape, tuple(path.taken)), witness
            )
    return list(found.values())
