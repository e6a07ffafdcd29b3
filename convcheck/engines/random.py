"""The random engine, the default: the solver's cases first, then seeded bulk generation.

Sampling is the fastest way through the case space, but a value band only a narrowed
multiply trips on (13 cases per million for ``groups * w.size(1)`` in int32) waits for
luck. So the engine first judges the solver's witnesses and width-band cases
(``convcheck.solver.seeds``, cached on disk) when z3 is installed, then samples.

With shards (``--jobs N``, N >= 2) the samples are made where they are judged: each
chunk is a stream of its own, named by the seed and the chunk's number (``chunk``), so a
seed gives other cases with shards than without, and the same ones with any number of
shards.
"""

from __future__ import annotations

import hashlib
import importlib.util
import time
from collections.abc import Iterator
from itertools import islice
from typing import TYPE_CHECKING

from convcheck import ops
from convcheck.case import Case
from convcheck.generate import RandomSource

if TYPE_CHECKING:
    from convcheck.campaign import Campaign

BATCH = 256
# How often a case of the op's ``build_case`` gives way to one of a family it almost never
# makes (the op's ``rare``).
RARE = 1 / 256
# Of a time budget, solving may take this share; the rest is sampling.
SOLVING_SHARE = 0.25


def cases(seed: int, op: str = ops.DEFAULT_OP) -> Iterator[Case]:
    the_op = ops.get(op)
    build, families = the_op.build_case, the_op.rare
    src = RandomSource(seed)
    # A stream of its own: every case of the main stream stays the same (some are replaced).
    rare = RandomSource(-1 - seed)
    while True:
        case = build(src)
        if families and rare.chance(RARE):
            case = rare.choice(families)(rare)
        yield case


def chunk(seed: int, index: int, count: int, op: str = ops.DEFAULT_OP) -> list[Case]:
    """The ``index``-th chunk of a sharded campaign's cases: the start of a stream of its
    own, so that a shard makes it from three numbers, the parent generating nothing."""
    digest = hashlib.blake2b(f"{seed}:{index}".encode(), digest_size=8).digest()
    return list(islice(cases(int.from_bytes(digest, "little"), op), count))


def explore(campaign: Campaign, seed: int, solved: bool = True) -> None:
    if campaign.shards is not None:
        campaign.shards.warm(campaign.deadline)  # while the solver's cases are made
    if solved and importlib.util.find_spec("z3") is not None:
        from convcheck.solver.seeds import seed_cases

        deadline = campaign.deadline
        seconds = None if deadline is None else (deadline - time.monotonic()) * SOLVING_SHARE
        judges = campaign.judges
        submit_all(campaign, seed_cases(judges.revision, seconds, lambda: judges.stopped))
    if campaign.shards is not None:
        # Each shard generates the chunks it judges: (seed, chunk) names the cases.
        campaign.submit_random(seed, BATCH)
        return
    stream = cases(seed, campaign.judges.op)
    while not campaign.exhausted:
        campaign.submit(list(islice(stream, campaign.batch(BATCH))))


def submit_all(campaign, solved: list[Case]) -> None:
    """Judge ``solved`` in order, in the batches the campaign sizes."""
    while solved and not campaign.exhausted:
        n = campaign.batch(BATCH)
        campaign.submit(solved[:n])
        solved = solved[n:]
