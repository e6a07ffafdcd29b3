"""Sharded judging: with ``--jobs N`` (N >= 2), a campaign's cases are judged in N shard
processes, so that the whole pipeline scales, not only the workers.

A shard is a sandbox worker (``convcheck.sandbox``) whose ``init`` makes judges like the
campaign's, with one native and one torch worker of its own, and whose handler runs the
whole pipeline on one request's cases: the model, exact arithmetic, torch's check path,
its workers, the findings. It returns only what the campaign needs: how many cases it
finished, and the findings with the time their case was judged (most cases have none).
The parent keeps the engine, deduplication, the corpus (written as each answer comes
in), progress and minimisation (on its own judges, which start their workers only if it
shrinks).

Requests stream (``WorkerPool.stream``): each shard holds two, the one it judges and the
next in its pipe, and is handed another as soon as it answers, so no shard waits for
another, and one slow call holds up its own shard only. The random engine's cases are
generated in the shards (``random.chunk``: a chunk is named by the seed and its number),
so the parent neither makes nor sends them; the cases of the Hypothesis engine and the
solver's are sent, a batch at a time (the atheris engine judges in a child of its own,
unsharded). The count of confirmed crashes and over-strict findings (``Judges.judge``'s
thrifty) is the campaign's: each request carries a view of it and the shard answers with
what it confirmed. With a case budget and no time budget the view is settled: request k sees
what requests before k - ``LAG`` confirmed, and waits for them, so a seeded campaign
finds the same with any number of shards, whichever shard judged which chunk or when
(a time budget's campaign is the machine's anyway: there each request sees everything
confirmed so far, and never waits).

A shard runs as a started process (``python _worker_main.py``), never forked from a
process that imported torch. It has a time limit per request and a memory limit (its RSS,
watched by the pool: an address-space limit would be inherited by its sanitized workers,
which reserve terabytes of it), and is reaped with its workers like any sandbox worker.
A shard that dies or hangs loses its request's cases (not counted as judged, and made
up by later requests under a case budget; the findings written so far are on disk); the
request waiting behind it goes to its replacement. When shards keep failing, the
campaign ends with a ``ConvcheckError``.

Each shard imports torch (its check path) and starts its own workers (its torch worker
imports torch too): two shards import torch four times where one process does twice,
so on 2 cores a sharded campaign's first cases come about a second later
(benchmarks/README.md), which its throughput repays within seconds.
"""

from __future__ import annotations

import base64
import contextlib
import pickle
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from convcheck import generate
from convcheck.case import Case
from convcheck.errors import ConvcheckError
from convcheck.findings import Finding
from convcheck.sandbox import Crash, Hang, WorkerPool, WorkerSpec
from convcheck.simplicity import complexity

# A shard's RSS limit: Python, torch, the model and a batch's judgements.
MEMORY_MB = 4096
# Seconds of judging per request at most (at least this, or several of the judges'
# timeouts): a target that hangs on many cases costs a shard that long, then the cases
# left are unjudged; the pool's own timeout is a little longer, for a shard that hangs.
SLICE = 120.0
GRACE = 10.0
# Requests out per shard: the one it judges and the next, waiting in its pipe, so that it
# never waits for the parent.
WINDOW = 2
# Failed requests in a row, per shard: then something is wrong with shards.
FAILURES = 3
# A case budget's requests are deterministic: request k carries the crashes confirmed by
# requests 0 .. k - LAG - 1 (and before the stream), and is not sent until they have all
# answered. Twice what two shards hold: the others run that far ahead of a slow shard
# before they wait for it; the smaller, the sooner a confirmed crash's copies are skipped.
LAG = 8


@dataclass
class Judged:
    """A request's (or a batch's) answers from the shards."""

    complete: int = 0  # cases judged to the end
    # (index in the request, when its case was judged, its findings), in order
    found: list[tuple[int, float, list[Finding]]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # how shards failed on it


class Shards:
    """``count`` shard processes judging for ``judges`` (started on the first request)."""

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
        self._failing = 0  # failed requests in a row
        self._warming: threading.Thread | None = None
        judges.attach(self)

    def start(self, deadline: float | None = None) -> None:
        """Start every shard and wait until they are ready, or until ``deadline`` (then the
        ones not ready are stopped)."""
        self._pool.run([{"warm": True}] * self.count, deadline)

    def warm(self, deadline: float | None = None) -> None:
        """``start`` without waiting: the shards' start-up (torch, their workers) then
        overlaps the caller's own work (the solver's cases), and the first request finds
        them ready. A shard that cannot start says so at the first request; one not ready
        at ``deadline`` (the campaign's) is stopped, so that the campaign ends then."""

        def start() -> None:
            with contextlib.suppress(Exception):
                self.start(deadline)

        if self._warming is None:
            self._warming = threading.Thread(target=start, name="convcheck-shards", daemon=True)
            self._warming.start()

    def stream(
        self,
        next_part: Callable[[], dict[str, Any] | None],
        take: Callable[[dict[str, Any], Judged], None],
        thrifty: Counter,
        deadline: float | None,
        settled: bool,
    ) -> None:
        """Parts as ``next_part`` gives them (``{"cases": packed cases}`` or ``{"random":
        [seed, chunk, count]}``; None: none now), each judged by whichever shard has room,
        ``take(part, judged)`` called as each answer comes in; ``thrifty`` (the campaign's
        confirmed crashes) updated. ``settled``: each part carries the crashes confirmed
        ``LAG`` parts before it (see ``LAG``), so that what a seeded campaign finds does
        not depend on which shard judged which part, or when; else all confirmed so far.
        """
        confirmed = _Confirmed(thrifty, settled)
        # The parts sent and not answered yet, by number (the pool numbers them in order).
        out: dict[int, dict[str, Any]] = {}

        def next_request() -> dict[str, Any] | None:
            if deadline is not None and time.monotonic() >= deadline:
                return None  # nothing more, and no shard started for it
            number = len(out) + confirmed.answered
            view = confirmed.view(number)
            part = None if view is None else next_part()
            if part is None:
                return None
            out[number] = part
            return {**part, "thrifty": view, "deadline": deadline, "slice": self.slice}

        def deliver(number: int, answer: dict[str, Any] | Crash | Hang | None) -> None:
            part, judged = out.pop(number), Judged()
            if isinstance(answer, dict):
                self._failing = 0
                confirmed.add(number, self._take(answer, judged))
            else:
                confirmed.add(number, Counter())
                if answer is not None:  # a shard crashed or hung (None: stopped, the deadline)
                    judged.failures.append(f"shard {answer.describe()}")
                    self._failing += 1
            take(part, judged)
            if self._failing >= FAILURES * self.count:
                raise ConvcheckError(f"shards keep failing: {judged.failures[0]}")

        # The shards cut their requests at the deadline themselves; the pool's is a backstop.
        backstop = None if deadline is None else deadline + GRACE
        self._pool.stream(next_request, deliver, backstop, WINDOW)

    def judge(
        self, parts: list[dict[str, Any]], thrifty: Counter, deadline: float | None
    ) -> Judged:
        """Every part of a batch (``case_parts``) judged, each its own request; the answers
        put together, the findings by their index in the batch, in order."""
        judged, left = Judged(), iter(parts)

        def take(part: dict[str, Any], answer: Judged) -> None:
            judged.complete += answer.complete
            judged.failures += answer.failures
            judged.found += [(part["offset"] + i, at, f) for i, at, f in answer.found]

        self.stream(lambda: next(left, None), take, thrifty, deadline, settled=True)
        judged.found.sort(key=lambda found: found[0])
        return judged

    def _take(self, answer: dict, judged: Judged) -> Counter:
        """A shard's answer into ``judged``; the crashes it confirmed."""
        judged.complete += answer["complete"]
        confirmed = Counter({tuple(key): n for *key, n in answer["thrifty"]})
        if "found" in answer:
            judged.found += _unpack(answer["found"])
        if "unknown" in answer:
            _merge_unknown(self.judges.ids.unknown, _unpack(answer["unknown"]))
        return confirmed

    def cancel(self) -> None:
        self._pool.cancel()

    def close(self) -> None:
        self._pool.close()
        if self._warming is not None:
            self._warming.join()


class _Confirmed:
    """The crashes confirmed, as each request is to see them (``Shards.stream``)."""

    def __init__(self, thrifty: Counter, settled: bool) -> None:
        self.thrifty = thrifty  # the campaign's: every answer counted in at once
        self.settled = settled
        self.seen = thrifty.copy()  # settled: what request ``folded + LAG`` sees
        self.folded = 0
        self.answers: dict[int, Counter] = {}  # settled: not folded into ``seen`` yet
        self.answered = 0  # requests answered (or lost)

    def add(self, number: int, confirmed: Counter) -> None:
        self.answered += 1
        self.thrifty.update(confirmed)
        if self.settled:
            self.answers[number] = confirmed

    def view(self, number: int) -> list[list] | None:
        """What request ``number`` carries; None while a request it must see is out."""
        if not self.settled:
            return [[*key, n] for key, n in self.thrifty.items()]
        while self.folded < number - LAG:
            if self.folded not in self.answers:
                return None
            self.seen.update(self.answers.pop(self.folded))
            self.folded += 1
        return [[*key, n] for key, n in self.seen.items()]


def case_parts(cases: list[Case], count: int) -> list[dict[str, Any]]:
    """``cases`` in at most ``count`` requests of nearly equal size, in order."""
    parts, start = [], 0
    for size in sizes(len(cases), count):
        parts.append({"cases": _pack(cases[start : start + size]), "size": size, "offset": start})
        start += size
    return parts


def sizes(total: int, count: int) -> list[int]:
    """``total`` in at most ``count`` positive parts that differ by one at most."""
    size, extra = divmod(total, count)
    return [size + (i < extra) for i in range(min(count, total))]


def _merge_unknown(into: dict, more: dict) -> None:
    """Ids a target's rejections carried that no map reads, counted in a shard, into the
    parent's count (``IdReader.unknown``)."""
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
    """In the shard: one request's cases (a chunk of the random engine, or a part of a
    batch), judged in full."""
    judges = _JUDGES
    assert judges is not None  # made by ``start``
    if "warm" in request:
        return {}
    if request["deadline"] is not None and time.monotonic() >= request["deadline"]:
        return {"complete": 0, "thrifty": []}  # sent before the deadline, its turn came after
    if "random" in request:
        cases = generate.chunk(*request["random"])
    else:
        cases = _unpack(request["cases"])
    thrifty = Counter({tuple(key): n for *key, n in request["thrifty"]})
    before = thrifty.copy()
    # The slice counts from now, not from when the parent sent the request: it may have
    # waited here behind the one before.
    deadline = time.monotonic() + request["slice"]
    if request["deadline"] is not None:
        deadline = min(deadline, request["deadline"])
    judgements = judges.judge(cases, thrifty, deadline)
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
