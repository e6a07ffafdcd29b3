"""Missing and over-strict checks, solved against torch: the model beside ATen's checks.

Each path runs a revision's steps and then torch's checks up to the choice of a backend
(``torch_oracle``: the dispatcher's lists, ``_convolution``'s prologue, the parameters
expanded, ``check_shape_forward``, ``_select_conv_backend``'s empty-dim check) on the same
symbolic call, so its condition decides both. Where the model accepts and torch rejects
(``missing-check``, keyed by torch's check id) or the model rejects and torch's checks
pass (``over-strict``, keyed by the model's), the path's input is a witness, minimised
like ``prove``'s. torch's side is the oracle's own Python (``aten_call``, ``_fallback``,
held to ATen by ``tests/torch``) run over ``WrappingSymbolic``: nothing is written twice.

Then each witness is run for real: the concrete model, the same torch steps concretely,
and real torch (``TorchJudge``: CPU tensors for small calls). A disagreement real torch
shows is a finding unless an intentional difference
(``convcheck.ops.convolution.differences``) explains it. One it does not show is not a
finding: either torch's backend rejects the call in its own checks (step 4 of the check
path, not run symbolically: its checks allocate and compute), or it cannot even create
the call's tensors (a storage size past int64: not run symbolically either), or the
symbolic torch steps were wrong about it (the fallback's infidelity).
"""

from __future__ import annotations

from dataclasses import dataclass

import z3

from convcheck import model
from convcheck.fixedint import INT64_MAX, INT64_MIN, Arith, Wrapping
from convcheck.ops.convolution.case import ConvolutionCase
from convcheck.ops.convolution.differences import explain_difference
from convcheck.ops.convolution.solving import ConvolutionShape as Shape
from convcheck.ops.convolution.torch_oracle import (
    TorchError,
    aten_call,
    creation_problem,
    normalize,
    shape_checks,
)
from convcheck.outcome import ACCEPT, REJECT, Outcome
from convcheck.solver import limits
from convcheck.solver.explore import Inputs, describe_path, shapes
from convcheck.solver.prove import minimal_witness_of
from convcheck.solver.revisions import model_side, paired_paths
from convcheck.solver.symbolic import SymBool, SymInt

# The op whose torch check path is solved here.
OP = "convolution"
# torch's side is judged as the torch judge runs it by default.
THREADS = 2
ONEDNN = True
PASSED = "passed"  # torch's symbolic checks all pass: a backend is chosen next

# What a confirmed witness is.
FINDING = "finding"  # real torch disagrees with the model, and nothing explains it
KNOWN = "known-difference"  # an intentional difference explains it
BACKEND = "torch-backend"  # real torch's backend rejects it too (step 4, not solved)
STORAGE = "torch-storage"  # real torch cannot create its tensors (not solved either)
INFIDELITY = "fallback-infidelity"  # real torch does not do what the symbolic steps said
SOLVER = "solver-infidelity"  # the concrete model or torch steps differ from the symbolic
COUNTED = (FINDING, INFIDELITY, SOLVER)  # what makes ``prove`` exit 1


class WrappingSymbolic(Arith):
    """ATen's int64 arithmetic over terms: it wraps, as the oracle's ``Wrapping`` does.

    Unlike ``Symbolic`` (the kernel's arithmetic, where a signed overflow is undefined
    behaviour that ends the path), torch's result is C's wrapped value and the path goes
    on: dilation 2^62 makes ATen's kernel extent negative and the call is accepted.
    Only the operations torch's checks before the backend use are here; any other one
    fails loudly (the base class computes on Python ints, which a ``SymInt`` refuses).
    """

    def __init__(self, path) -> None:
        super().__init__()
        self.path = path

    def _i64(self, term) -> SymInt:
        # Forked like a branch: in range the term stays exact (what the solver reasons
        # about fastest); past it, the exact value wrapped modulo 2^64.
        if SymBool(z3.And(term >= INT64_MIN, term <= INT64_MAX), self.path):
            return SymInt(z3.simplify(term), self.path)
        wrapped = (term - INT64_MIN) % (INT64_MAX - INT64_MIN + 1) + INT64_MIN
        return SymInt(z3.simplify(wrapped), self.path)

    @staticmethod
    def _term(value):
        return value.term if isinstance(value, SymInt) else z3.IntVal(value)

    def add_i64(self, a, b, site):
        return self._i64(self._term(a) + self._term(b))

    def sub_i64(self, a, b, site):
        return self._i64(self._term(a) - self._term(b))

    def mul_i64(self, a, b, site):
        return self._i64(self._term(a) * self._term(b))

    def rem_i64(self, a, b, site):
        """C's ``%``: the quotient rounds toward zero. torch divides only by values its
        checks made positive before (``groups > 0`` in the prologue)."""
        x, y = self._term(a), self._term(b)
        magnitude = z3.Abs(x) / z3.Abs(y)
        quotient = z3.If((x < 0) == (y < 0), magnitude, -magnitude)
        return SymInt(z3.simplify(x - y * quotient), self.path)


def torch_steps(case, arith: Arith) -> None:
    """torch's checks before the backend: raises ``TorchError`` where torch rejects."""
    shape_checks(aten_call(case, arith, THREADS, ONEDNN))


def torch_check(case: ConvolutionCase) -> str:
    """The same steps on a concrete call: torch's check id, or ``PASSED``."""
    try:
        torch_steps(case, Wrapping())
    except TorchError as e:
        return normalize(e.error, e.message, case)
    return PASSED


def _torch_side(case, path) -> bool:
    """True when torch's checks pass on this path, False when one rejects."""
    try:
        torch_steps(case, WrappingSymbolic(path))
    except TorchError:
        return False
    return True


def torch_inputs(shape: Shape) -> Inputs:
    """The shape's variables, and output_padding's for a regular call too: torch checks
    its sign whether or not the call is transposed (the model does not read it)."""
    inputs = Inputs.of(shape)
    inputs.unpin()
    return inputs


def torch_shapes() -> list[Shape]:
    """Ranks 3 to 5 whatever the revision: torch accepts 5-D inputs, ``legacy`` not."""
    return [s for s in shapes("current") if isinstance(s, Shape)]


@dataclass
class TorchDisagreement:
    """The model accepts where torch rejects (``missing-check``), or the reverse."""

    kind: str  # "missing-check" (the model accepts) or "over-strict" (the model rejects)
    check: str  # the rejecting side's check id: torch's, or the model's
    path: str
    witness: ConvolutionCase
    model: Outcome | None = None  # the concrete model on the witness
    torch: Outcome | None = None  # real torch on the witness
    backend: str = ""  # the backend real torch chose ("" when rejected before)
    status: str = ""  # FINDING, KNOWN, BACKEND, INFIDELITY or SOLVER
    note: str = ""  # the intentional difference, or what real torch said instead

    def describe(self) -> str:
        return f"{self.kind} {self.check} on {self.path}: {self.status} {self.note}".rstrip()

    def to_json(self) -> dict:
        def outcome(o: Outcome | None):
            return None if o is None else {"verdict": o.verdict, "check": o.check}

        return {
            "kind": self.kind,
            "check": self.check,
            "path": self.path,
            "witness": self.witness.to_json(),
            "model": outcome(self.model),
            "torch": outcome(self.torch),
            "backend": self.backend,
            "status": self.status,
            "note": self.note,
        }


# Per input rank, the bound on every size and argument (None: none). Small values show
# only the disagreements small calls show, but fast: no value can wrap, so torch's paths
# do not fork on it (each spatial dim has four wraps, and the forks multiply: one 2-D
# shape took minutes with small values, a 3-D one did not end unbounded).
RANK_BOUNDS = {3: None, 4: 4, 5: 4}


def solve(
    revision: str,
    only: list[Shape] | None = None,
    rlimit: int = limits.QUERY,
    bounds: dict[int, int | None] = RANK_BOUNDS,
) -> list[TorchDisagreement]:
    """One minimised witness per (kind, check id), simplest shapes first; not judged."""
    found: dict[tuple[str, str], TorchDisagreement] = {}
    for shape in only or torch_shapes():
        inputs = torch_inputs(shape)
        bound = bounds[shape.rank]
        if bound is not None:
            inputs.domain += [z3.And(t >= -bound, t <= bound) for t in inputs.terms()]
        paths: dict[tuple[str, str], list] = {}
        for path, outcome, passes in paired_paths(
            inputs, model_side(revision), _torch_side, rlimit
        ):
            if (outcome.verdict == ACCEPT) == passes:
                continue
            # The path's input takes the same branches: torch's id is the concrete one's.
            key = (
                ("missing-check", torch_check(inputs.concrete_case(path.model)))
                if outcome.verdict == ACCEPT
                else ("over-strict", outcome.check)
            )
            if key not in found:
                paths.setdefault(key, []).append(path)
        for key, taken in paths.items():
            # The smallest input over every path that shows it, not only the first one's.
            either = z3.Or([z3.And(*p.decisions) for p in taken])
            best = minimal_witness_of(inputs, [either], z3.BoolVal(True))
            shown = next((p for p in taken if best is not None and _takes(best, p)), taken[0])
            witness = inputs.concrete_case(best or shown.model)
            found[key] = TorchDisagreement(*key, describe_path(shape, tuple(shown.taken)), witness)
    return list(found.values())


def _takes(m: z3.ModelRef, path) -> bool:
    return all(z3.is_true(m.eval(d, model_completion=True)) for d in path.decisions)


def confirm(revision: str, found: list[TorchDisagreement], judge) -> None:
    """Each witness through the concrete model, the concrete torch steps and real torch
    (``judge``: a ``TorchJudge``); sets each one's status and note."""
    verdicts = judge.judge([d.witness for d in found])
    for d, verdict in zip(found, verdicts, strict=True):
        d.model = model.run(d.witness, revision).outcome
        d.torch, d.backend = verdict.outcome, verdict.backend
        steps = torch_check(d.witness)
        if d.kind == "missing-check":
            symbolic_agrees = d.model.verdict == ACCEPT and steps == d.check
        else:
            symbolic_agrees = d.model.check == d.check and steps == PASSED
        if not symbolic_agrees:
            d.status = SOLVER
            d.note = f"concrete: model {d.model.verdict} {d.model.check or ''}, torch {steps}"
        elif (d.torch.verdict == ACCEPT) != (d.model.verdict == ACCEPT):
            difference = explain_difference(d.witness, revision, d.model, d.torch, verdict)
            d.status = KNOWN if difference else FINDING
            d.note = difference.name if difference else f"real torch: {_said(d.torch)}"
        elif d.kind == "over-strict" and d.backend and d.torch.verdict == REJECT:
            d.status = BACKEND
            d.note = f"real torch's {d.backend} backend: {_said(d.torch)}"
        elif d.kind == "over-strict" and creation_problem(d.witness) is not None:
            d.status = STORAGE
            d.note = f"real torch cannot create its tensors: {_said(d.torch)}"
        else:
            d.status = INFIDELITY
            d.note = f"real torch: {_said(d.torch)} ({d.backend or 'no backend'})"


def _said(outcome: Outcome) -> str:
    return outcome.verdict + (f" {outcome.check}" if outcome.check else "")


def disagreements(revision: str, only: list[Shape] | None = None) -> list[TorchDisagreement]:
    """Solved, then confirmed by real torch (which must be installed)."""
    from convcheck.ops.convolution.torch_oracle import TorchJudge

    found = solve(revision, only)
    with TorchJudge(jobs=1, threads=THREADS) as judge:
        confirm(revision, found, judge)
    return found
