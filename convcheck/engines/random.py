"""The random engine, the default: the solver's cases first, then seeded bulk generation.

Sampling is the fastest way through the case space, but a value band only a narrowed
multiply trips on (13 cases per million for convolution's product of its channels per
group and its group count in int32) waits for luck. So the engine first judges the
solver's witnesses and width-band cases (``convcheck.solver.seeds``, cached on disk)
when z3 is installed, then samples.

With shards (``--jobs N``, N >= 2) the samples are made where they are judged: each
chunk is a stream of its own, named by the seed and the chunk's number
(``generate.chunk``), so a seed gives other cases with shards than without, and the same
ones with any number of shards.
"""

from __future__ import annotations

import importlib.util
from itertools import islice
from typing import TYPE_CHECKING

from convcheck import generate, registry
from convcheck.case import Case

if TYPE_CHECKING:
    from convcheck.campaign import Campaign

BATCH = 256


def explore(campaign: Campaign, seed: int, solved: bool = True) -> None:
    if campaign.shards is not None:
        campaign.shards.warm(campaign.deadline)  # while the solver's cases are made
    # An op that names no seed shapes (``Op.seed_shapes``) has no solved cases: it samples
    # from the start.
    op = campaign.judges.op
    seeded = bool(registry.get(op).seed_shapes(campaign.judges.revision))
    if solved and seeded and importlib.util.find_spec("z3") is not None:
        from convcheck.solver.seeds import seed_cases

        # Solved whole, never to the budget's clock (the command solved them ahead of it).
        judges = campaign.judges
        submit_all(campaign, seed_cases(judges.revision, lambda: judges.stopped, op))
    if campaign.shards is not None:
        # Each shard generates the chunks it judges: (seed, chunk) names the cases.
        campaign.submit_random(seed, BATCH)
        return
    stream = generate.stream(seed, campaign.judges.op)
    while not campaign.exhausted:
        campaign.submit(list(islice(stream, campaign.batch(BATCH))))


def submit_all(campaign, solved: list[Case]) -> None:
    """Judge ``solved`` in order, in the batches the campaign sizes."""
    while solved and not campaign.exhausted:
        n = campaign.batch(BATCH)
        campaign.submit(solved[:n])
        solved = solved[n:]
