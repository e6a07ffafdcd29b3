"""Convolution's own solved cases for the solver engine (``Op.solver_cases``): what the
core's exploration of the model's sites cannot ask.

- The witnesses of the calls the revision and torch's checks answer apart
  (``against_torch``, small values): they show ``legacy`` accepting negative groups and
  rejecting 5-D inputs before any sampled case.
- A witness of the loops' stride sites that the kernel's run entry can run (a 2-D
  transposed call).
"""

from __future__ import annotations

from typing import Any

import z3

from convcheck.ops.convolution import against_torch
from convcheck.ops.convolution.solving import ConvolutionShape
from convcheck.solver import limits
from convcheck.solver.explore import explore, shapes
from convcheck.solver.prove import minimal_witness_of
from convcheck.solver.symbolic import WITNESS, SymInt

# The rank whose shapes are solved whole against torch; the others only where the
# revision rejects every call of the rank.
SOLVED_RANK = 3
# The torch query's values: small calls show every check one side lacks, and fast.
TORCH_BOUND = 4
STRIDE_SHAPE = ConvolutionShape(4, True, None)
STRIDE_SITES = "wrapper_strides."
OUT_CHANNELS = "output_sizes.channels_narrow"


def solver_cases(revision: str) -> tuple:
    return (*torch_cases(revision), *stride_cases(revision))


def torch_cases(revision: str) -> list:
    """The witnesses of the calls the revision and torch's checks answer apart: the
    rank-3 no-bias shapes, and those of every rank the revision rejects outright (its
    model has one path there, so the query is torch's alone: fast). Judged, not
    confirmed here (the torch judge does that)."""
    modelled = {s.rank for s in shapes(revision)}
    only = [
        s
        for s in against_torch.torch_shapes()
        if s.bias is None and (s.rank == SOLVED_RANK or s.rank not in modelled)
    ]
    bounds: dict[int, int | None] = dict.fromkeys(against_torch.RANK_BOUNDS, TORCH_BOUND)
    return [d.witness for d in against_torch.solve(revision, only, bounds=bounds)]


def stride_cases(revision: str) -> list:
    """One witness of the loops' stride sites that the run entry can run, if any.

    The loops' set-up computes input's and weight's strides in int32, a size of 0
    counting as 1: they overflow where an empty tensor's other sizes multiply past 2^31
    while out is not empty. Only the run entry computes them, on tensors of at most
    ``SMALL_NUMEL`` elements each, and no 1-D call it can run does (``tests/solver``); a
    2-D transposed one can. So the query adds what makes the call runnable and takes the
    first path it fits: small tensors, and an output the native worker agrees to compute
    (its sizes as the path computed them before halting; an empty input plane, so the
    loops do no multiply-adds and their work is the output's size).
    """
    from convcheck.judges import SMALL_NUMEL
    from convcheck.native.limits import RunLimits

    for path in explore(revision, STRIDE_SHAPE):
        inputs = path.inputs
        # Any: on the solver's paths an operation's result is a SymInt (the trace's type
        # says int, what the model's own runs hold).
        computed: dict[str, Any] = {op.site: op.result for op in path.trace}
        sites = [OUT_CHANNELS] + [f"output_sizes.dim{i}.narrow" for i in range(2)]
        if not all(isinstance(computed.get(site), SymInt) for site in sites):
            continue  # halted before the output sizes: the loops are not reached
        out = [inputs.sizes["input"][0]] + [computed[site].term for site in sites]
        runnable = [z3.Product(inputs.sizes[t]) <= SMALL_NUMEL for t in ("input", "weight")]
        runnable += [
            z3.Product(inputs.sizes["input"][2:]) == 0,
            z3.Product(out) <= RunLimits.max_out_elements,
            z3.Product(out) + out[0] * inputs.ints["groups"][0] <= RunLimits.max_work,
        ]
        for q in path.queries:
            if q.status != WITNESS or not q.site.startswith(STRIDE_SITES):
                continue
            # A plain solver first: Optimize spends its whole time before saying unsat.
            solver = limits.solver(2 * limits.QUERY)
            solver.add(*inputs.domain, *q.decisions, q.condition, *runnable)
            if solver.check() == z3.sat:
                found = minimal_witness_of(inputs, [*q.decisions, *runnable], q.condition)
                return [inputs.concrete_case(found or solver.model())]
    return []
