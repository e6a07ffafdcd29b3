"""Sharded judging: with ``--jobs N`` (N >= 2), a campaign's cases are judged in N shard
processes, so that the whole pipeline scales, not only the workers.

A shard is a sandbox worker (``convcheck.sandbox``) whose ``init`` makes judges like the
campaign's, with one native and one torch worker of its own, and whose handler runs the
whole pipeline on its share of a batch: the model, exact arithmetic, torch's check path,
its workers, the findings. It returns only what the campaign needs: how many cases it
finished, and the findings with the time their case was judged (most cases have none).
The parent keeps the engine, deduplication, the corpus (written at once), progress and
minimisation (on its own judges, which start their workers only if it shrinks).

The random engine's cases are generated in the shards (``random.chunk``: a chunk is named
by the seed and its number), so the parent neither makes nor sends them; the cases of
the Hypothesis engine and the solver's are sent (the atheris engine judges in a child
of its own, unsharded). The count of confirmed crashes (``Judges.judge``'s thrifty) is the
campaign's: each request carries it as it was when the batch began, and the shard
answers with what it confirmed, so a seeded campaign's findings depend on the seed and
the number of shards only, not on which shard judged which chunk or when.

A shard runs as a started process (``python _worker_main.py``), never forked from a
process that imported torch. It has a time limit per request and a memory limit (its RSS,
watched by the pool: an address-space limit would be inherited by its sanitized workers,
which reserve terabytes of it), and is reaped with its workers like any sandbox worker.
A shard that dies or hangs loses its request's cases (not counted as judged; the
findings written so far are on disk) and is started again for the next batch; when
shards keep failing, the campaign ends with a ``ConvcheckError``.

Each shard imports torch and starts its own workers: a sharded campaign's first batch
comes a few seconds later than a one-process campaign's, which the throughput repays
only in campaigns longer than that.
"""

from __future__ import annotations

import base64
import contextlib
import pickle
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from convcheck.case import Case
from convcheck.errors import ConvcheckError
from convcheck.findings import Finding
from convcheck.sandbox import WorkerPool, WorkerSpec

# A shard's RSS limit: Python, torch, the model and a batch's judgements.
MEMORY_MB = 4096
# Seconds of judging per request at most (at least this, or several of the judges'
# timeouts): a target that hangs on many cases costs a shard that long, then the cases
# left are unjudged; the pool's own timeout is a little longer, for a shard that hangs.
SLICE = 120.0
GRACE = 10.0
# Batches in a row in which every shard failed: then something is wrong with shards.
FAILURES = 3


@dataclass
class Judged:
    """A batch's answers from the shards."""

    complete: int = 0  # cases judged to the end
    # (index in the batch, when its case was judged, its findings), in batch order
    found: list[tuple[int, float, list[Finding]]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # how shards failed on this batch


class Shards:
    """``count`` shard processes judging for ``judges`` (started on the first batch)."""

    def __init__(self, judges, count: int) -> None:
        self.judges = judges
        self.count = count
        self.slice = max(SLICE, 6 * judges.arguments["timeout"])
        spec = WorkerSpec(
            handler="convcheck.shards:judge",
            init="convcheck.shards:start",
            config={"judges": _pack(judges.arguments)},
            memory_limit_mb=MEMORY_MB,
            # Not sanitized itself: it makes the pool watch the RSS instead of limiting
            # the address space (see the module's docstring).
            sanitized=True,
        )
        self._pool = WorkerPool(spec, jobs=count, timeout=self.slice + GRACE)
        self._failed_batches = 0
        self._warming: threading.Thread | None = None
        judges.attach(self)

    def start(self, deadline: float | None = None) -> None:
        """Start every shard and wait until they are ready, or until ``deadline`` (then the
        ones not ready are stopped)."""
        self._pool.run([{"warm": True}] * self.count, deadline)

    def warm(self, deadline: float | None = None) -> None:
        """``start`` without waiting: the shards' start-up (torch, their workers) then
        overlaps the caller's own work (the solver's cases), and the first batch finds
        them ready. A shard that cannot start says so at the first batch; one not ready
        at ``deadline`` (the campaign's) is stopped, so that the campaign ends then."""

        def start() -> None:
            with contextlib.suppress(Exception):
                self.start(deadline)

        if self._warming is None:
            self._warming = threading.Thread(target=start, name="convcheck-shards", daemon=True)
            self._warming.start()

    def judge(
        self, parts: list[dict[str, Any]], thrifty: Counter, deadline: float | None
    ) -> Judged:
        """Each part (``{"cases": packed cases}`` or ``{"random": [seed, chunk, count]}``)
        judged in a shard; ``thrifty`` (the campaign's confirmed crashes) updated."""
        now = time.monotonic()
        limit = now + self.slice if deadline is None else min(deadline, now + self.slice)
        confirmed = [[*key, n] for key, n in thrifty.items()]
        requests = [{**part, "thrifty": confirmed, "deadline": limit} for part in parts]
        # The shards cut their batch at the deadline themselves; the pool's is a backstop.
        answers = self._pool.run(requests, None if deadline is None else deadline + GRACE)
        judged, offset = Judged(), 0
        for part, answer in zip(parts, answers, strict=True):
            if isinstance(answer, dict):
                self._take(answer, offset, thrifty, judged)
            elif answer is not None:  # a shard crashed or hung (None: stopped, or the deadline)
                judged.failures.append(f"shard {answer.describe()}")
            offset += part["size"]
        lost = judged.failures and not judged.complete
        self._failed_batches = self._failed_batches + 1 if lost else 0
        if self._failed_batches >= FAILURES:
            raise ConvcheckError(f"shards keep failing: {judged.failures[0]}")
        return judged

    def _take(self, answer: dict, offset: int, thrifty: Counter, judged: Judged) -> None:
        judged.complete += answer["complete"]
        for *key, n in answer["thrifty"]:
            thrifty[tuple(key)] += n
        if "found" in answer:
            judged.found += [(offset + i, at, f) for i, at, f in _unpack(answer["found"])]
        if "unknown" in answer:
            _merge_unknown(self.judges.ids.unknown, _unpack(answer["unknown"]))

    def cancel(self) -> None:
        self._pool.cancel()

    def close(self) -> None:
        self._pool.close()
        if self._warming is not None:
            self._warming.join()


def case_parts(cases: list[Case], count: int) -> list[dict[str, Any]]:
    """``cases`` in at most ``count`` requests of nearly equal size, in order."""
    parts, start = [], 0
    for size in sizes(len(cases), count):
        parts.append({"cases": _pack(cases[start : start + size]), "size": size})
        start += size
    return parts


def random_parts(seed: int, first_chunk: int, total: int, count: int) -> list[dict[str, Any]]:
    """``total`` cases of the random engine in at most ``count`` chunks, numbered on from
    ``first_chunk``."""
    return [
        {"random": [seed, first_chunk + i, size], "size": size}
        for i, size in enumerate(sizes(total, count))
    ]


def sizes(total: int, count: int) -> list[int]:
    """``total`` in at most ``count`` positive parts that differ by one at most."""
    size, extra = divmod(total, count)
    return [size + (i < extra) for i in range(min(count, total))]


def _merge_unknown(into: dict, more: dict) -> None:
    """Ids a target's rejections carried that no map reads, counted in a shard, into the
    parent's count (``IdReader.unknown``)."""
    from convcheck.campaign import complexity

    for check, seen in more.items():
        mine = into.setdefault(check, seen)
        if mine is seen:
            continue
        mine.count += seen.count
        mine.model_says.update(seen.model_says)
        if complexity(seen.case) < complexity(mine.case):
            mine.case = seen.case


def _pack(value: Any) -> str:
    return base64.b64encode(pickle.dumps(value, pickle.HIGHEST_PROTOCOL)).decode("ascii")


def _unpack(text: str) -> Any:
    return pickle.loads(base64.b64decode(text))


# -- the shard's side ----------------------------------------------------------------------

_JUDGES = None


def start(config: dict[str, Any]) -> None:
    """In the shard: make the judges, one worker each; torch's start at once."""
    global _JUDGES
    import faulthandler

    from convcheck.judges import Judges

    faulthandler.enable()  # the pool leaves it off for a "sanitized" worker
    _JUDGES = Judges(**_unpack(config["judges"]), jobs=1, warm=True)


def judge(request: dict[str, Any]) -> dict[str, Any]:
    """In the shard: one part of a batch, judged in full."""
    from convcheck.engines import random as random_engine

    judges = _JUDGES
    if "warm" in request:
        return {}
    if "random" in request:
        cases = random_engine.chunk(*request["random"])
    else:
        cases = _unpack(request["cases"])
    thrifty = Counter({tuple(key): n for *key, n in request["thrifty"]})
    before = thrifty.copy()
    judgements = judges.judge(cases, thrifty, request["deadline"])
    complete, found = 0, []
    for i, j in enumerate(judgements):
        if j.complete:
            complete += 1
            findings = judges.findings(j)
            if findings:
                found.append((i, j.judged_at, findings))
    answer: dict[str, Any] = {
        "complete": complete,
        "thrifty": [[*key, n - before[key]] for key, n in thrifty.items() if n != before[key]],
    }
    if found:
        answer["found"] = _pack(found)
    if judges.ids.unknown:
        answer["unknown"] = _pack(judges.ids.unknown)
        judges.ids.unknown = {}
    return answer
