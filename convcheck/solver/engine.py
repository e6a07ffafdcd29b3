"""The solver as a campaign engine: witnesses and band cases first, then sampling.

First the default engine's solved cases (``solver.seeds``: each site's first witness and
its 32-bit bands, cached on disk), then every site's minimised witness and band cases,
then the witnesses of the calls the revision and torch answer apart (``against_torch``,
small values: it is what shows ``legacy`` accepting negative groups and rejecting 5-D
inputs before any sampled case), then a witness of the loops' stride sites that the
kernel's run entry can run (a 2-D call).

``explore(campaign, seed)`` has the shape of every engine in ``convcheck.engines``. The
site solving is of the 1-D calls. With a time budget the minimised witnesses are left
out (solving them overruns the budget); with a case budget alone the solving has no time
limit, so a case budget with a seed gives the same campaign anywhere; those cases are
cached on disk (``solver.cache``), as the seeds are.
"""

from __future__ import annotations

import functools
import time
from typing import TYPE_CHECKING, Any

import z3

from convcheck.case import Case
from convcheck.engines import random as random_engine
from convcheck.ops.convolution.solving import ConvolutionShape
from convcheck.solver import against_torch, cache, limits
from convcheck.solver.bands import band_cases
from convcheck.solver.explore import explore as explore_paths
from convcheck.solver.explore import shapes
from convcheck.solver.prove import minimal_witness_of, prove, solved_report
from convcheck.solver.seeds import seed_cases
from convcheck.solver.symbolic import WITNESS, SymInt

if TYPE_CHECKING:
    from convcheck.campaign import Campaign

SOLVED_RANK = 3
# The torch query's values: small calls show every check one side lacks, and fast.
TORCH_BOUND = 4
STRIDE_SHAPE = ConvolutionShape(4, True, None)
STRIDE_SITES = "wrapper_strides."
OUT_CHANNELS = "output_sizes.channels_narrow"


def solver_cases(revision: str, seconds: float | None = None, only=None) -> list:
    """Every witness, then every band case (within ``seconds`` when given)."""
    ordered = only or [s for s in shapes(revision) if s.rank == SOLVED_RANK]
    if seconds is None:
        report = solved_report(revision, ordered)  # the one solve the tests read too
    else:
        report = prove(revision, seconds / 2, ordered)
    cases = [s.witness for s in report.sites if s.witness is not None]
    return cases + band_cases(revision, None if seconds is None else seconds / 2, ordered)


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
    from convcheck.native.worker import RunLimits

    for path in explore_paths(revision, STRIDE_SHAPE):
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


@functools.cache
def _solved(revision: str) -> tuple:
    """Solved without a time limit, the answer depends on the revision alone: solved once
    per version of the code on a machine (minutes on legacy), then read from the disk."""
    return cache.solved(
        f"engine-{revision}",
        lambda: (solver_cases(revision) + torch_cases(revision) + stride_cases(revision), True),
        lambda cases: [c.to_json() for c in cases],
        lambda data: tuple(Case.from_json(c) for c in data),
    )


def first_cases(revision: str) -> list:
    """What the engine judges before it samples, under a case budget."""
    return seed_cases(revision) + list(_solved(revision))


def explore(campaign: Campaign, seed: int) -> None:
    # The default engine's solved cases first (cached: judged within the first second).
    judges, deadline = campaign.judges, campaign.deadline
    share = None if deadline is None else max(0.0, deadline - time.monotonic()) / 4
    random_engine.submit_all(campaign, seed_cases(judges.revision, share, lambda: judges.stopped))
    # The minimised witnesses only on a case budget: ``prove`` overruns a time limit (a
    # short campaign on legacy took three times its budget), and a campaign must end
    # when its time is up.
    if deadline is None and not campaign.exhausted:
        random_engine.submit_all(campaign, list(_solved(judges.revision)))
    # Its own cases include the default engine's, minimised: sampling alone is left.
    random_engine.explore(campaign, seed, solved=False)
