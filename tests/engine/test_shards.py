"""Sharded judging (``--jobs N``, N >= 2): shard processes judge a campaign's cases, each
with the whole pipeline; the parent keeps, writes and minimises. Campaigns here run a case
budget and a seed, never a time budget. (A signal stopping a sharded campaign whose
target hangs: tests/cli/test_stopping.py.)"""

import contextlib
import os
import signal
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from processes import descendants, running

from convcheck import corpus, generate
from convcheck.campaign import Budget, Campaign
from convcheck.engines import random as random_engine
from convcheck.errors import ConvcheckError
from convcheck.judges import Judges
from convcheck.ops.convolution.known_bugs import LEGACY_BUG_CLASSES, bug_class
from convcheck.sandbox import Crash, WorkerPool, WorkerSpec
from convcheck.shards import FAILURES, LAG, WINDOW, sizes


def shard_pids() -> set[int]:
    """This process's children that are sandbox workers: the shards (the campaign's own
    judges start none while shards judge)."""
    found = set()
    for pid in descendants(os.getpid()):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
            parent = int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1])
        except (OSError, ValueError):
            continue
        if parent == os.getpid() and b"_worker_main.py" in command:
            found.add(pid)
    return found


def test_a_batch_is_shared_out_evenly_in_order():
    assert sizes(10, 4) == [3, 3, 2, 2]
    assert sizes(3, 4) == [1, 1, 1]  # no empty request
    assert sizes(0, 2) == []


def test_a_chunk_of_the_random_engine_is_named_by_seed_and_number():
    assert generate.chunk(5, 3, 20) == generate.chunk(5, 3, 20)
    assert generate.chunk(5, 3, 20)[:7] == generate.chunk(5, 3, 7)
    assert generate.chunk(5, 3, 20) != generate.chunk(5, 4, 20)
    assert generate.chunk(5, 3, 20) != generate.chunk(6, 3, 20)


def legacy_classes(shards: int, cases: int, seed: int) -> tuple[set[str], set[str]]:
    """The bug classes a seeded random campaign finds (solver's cases left out: sampling
    alone), and every signature."""
    with Judges("legacy", jobs=shards) as judges:
        run = Campaign(judges, budget=Budget(cases=cases), shards=shards)
        random_engine.explore(run, seed, solved=False)
    assert run.stats.cases == cases and not run.shard_failures
    return {bug_class(f.signature) for f in run.found.values()} - {None}, set(run.found)


@pytest.mark.slow
def test_sharded_campaigns_find_the_legacy_bug_classes_of_an_unsharded_one():
    pytest.importorskip("torch")
    unsharded, _ = legacy_classes(1, 6144, seed=3)
    sharded, signatures = legacy_classes(2, 6144, seed=3)
    assert sharded == unsharded == set(LEGACY_BUG_CLASSES)
    # The same seed and number of shards: the same findings, whichever shard judged what.
    assert legacy_classes(2, 6144, seed=3)[1] == signatures


def test_a_shard_killed_mid_campaign_costs_its_cases_not_the_campaign(tmp_path):
    """Its request's cases are lost (not counted), a new shard takes over, every finding
    kept is on disk, and no process is left once the judges close."""
    folder = tmp_path / "corpus"
    # Workers other tests keep for the session (tests/torch's judge) are not shards.
    others = shard_pids()
    seen: set[int] = set()
    kills: list[int] = []
    on_disk_at_kill: dict[str, str] = {}

    def kill_soon(pid: int) -> None:
        # After the hook returns the next batch starts: the shard is busy with it.
        time.sleep(0.05)
        with contextlib.suppress(ProcessLookupError):  # the campaign may have ended
            os.kill(pid, signal.SIGKILL)

    def progress(cases, seconds, kinds, note):
        shards = shard_pids() - others
        seen.update(shards, *(descendants(pid) for pid in shards))
        if run.shard_failures or len(kills) >= 5 or cases < 1000 or not shards:
            return
        if not on_disk_at_kill:
            on_disk_at_kill.update({p.name: p.read_text() for p in folder.glob("*.json")})
        kills.append(min(shards))
        threading.Thread(target=kill_soon, args=(kills[-1],)).start()

    with Judges("legacy", jobs=2, use_torch=False) as judges:
        # Cases enough that the campaign is still judging when the kill lands, however
        # fast the machine (a kill after the end proves nothing).
        run = Campaign(judges, folder, progress=progress, budget=Budget(cases=20000), shards=2)
        random_engine.explore(run, 1, solved=False)
    assert kills and run.shard_failures, "no shard was killed while it judged"
    assert "SIGKILL" in run.shard_failures[0]
    assert run.stats.cases == 20000  # the lost cases were made up by later batches
    assert on_disk_at_kill, "nothing was written before the kill: the test proves nothing"
    for name, text in on_disk_at_kill.items():
        assert (folder / name).read_text() == text
    written = {
        key for entry in corpus.load_all(folder, corpus.torch_folder(folder)) for key in entry.keys
    }
    assert {f.key for f in run.new_findings()} <= written
    assert len(seen) > 2 * len(kills)  # the shards, their workers, the replacements
    assert not [pid for pid in seen if running(pid)]


class DeadPool:
    """A shard pool whose every shard dies on every request."""

    def __init__(self):
        self.requests = 0

    def stream(self, next_request, deliver, deadline=None, window=2):
        while next_request() is not None:
            self.requests += 1
            deliver(self.requests - 1, Crash("SIGSEGV", "", "SIGSEGV", None))

    def close(self):
        pass


def test_shards_that_keep_dying_end_the_campaign_with_a_clear_error():
    with Judges("legacy", use_native=False, use_torch=False) as judges:
        run = Campaign(judges, budget=Budget(cases=1000), shards=2)
        run.shards._pool = pool = DeadPool()
        with pytest.raises(ConvcheckError, match="shards keep failing: shard crash: SIGSEGV"):
            random_engine.explore(run, 1, solved=False)
    assert pool.requests == FAILURES * 2
    assert run.stats.cases == 0
    assert run.shard_failures == ["shard crash: SIGSEGV"] * FAILURES * 2


def test_a_slow_worker_does_not_hold_up_the_others_in_a_stream(tmp_path):
    """The first request waits until 30 others are answered: the other worker must go on
    without it (in lockstep it would wait, and the first would give up after 120 s)."""
    release = tmp_path / "release"
    requests = iter([{"wait_for": str(release)}] + [{"n": n} for n in range(1, 40)])
    answered: dict[int, dict] = {}

    def deliver(number, result):
        answered[number] = result
        if len(answered) == 30:
            release.touch()

    spec = WorkerSpec(handler="engine._slow_handler:handle")
    with WorkerPool(spec, jobs=2, timeout=600.0) as pool:
        pool.stream(lambda: next(requests, None), deliver, window=WINDOW)
    assert sorted(answered) == list(range(40))
    assert answered[0]["released"], "the other worker waited for the slow one"
    assert list(answered).index(0) >= 30
    # The two workers did it all, none replaced. Which one took the last requests depends on
    # the load: once released, the slow one takes what is left too.
    pids = {r["pid"] for r in answered.values()}
    assert len(pids) == 2 and answered[0]["pid"] in pids, pids


class HoldingPool:
    """Answers each request at once, except the first, which it holds (a shard on a slow
    call) until the source has nothing more to give: each answer confirms one crash."""

    def __init__(self):
        self.seen: list[int] = []  # the confirmations each request carried, in order

    def stream(self, next_request, deliver, deadline=None, window=2):
        answer = {"complete": 1, "thrifty": [[False, "SEGV", "site", 1]]}
        self.seen.append(self.confirmed(next_request()))
        while (request := next_request()) is not None:
            self.seen.append(self.confirmed(request))
            deliver(len(self.seen) - 1, answer)
        deliver(0, answer)  # the slow one, at last
        while (request := next_request()) is not None:
            self.seen.append(self.confirmed(request))
            deliver(len(self.seen) - 1, answer)

    @staticmethod
    def confirmed(request):
        return sum(n for *_, n in request["thrifty"])

    def close(self):
        pass


@pytest.mark.parametrize("settled", [True, False], ids=["case-budget", "time-budget"])
def test_what_confirmed_crashes_a_request_carries(settled):
    """With a case budget, request k carries exactly what requests 0 .. k - LAG - 1
    confirmed, whatever the order of the answers, and waits for them (a slow shard holds
    the others up only LAG requests later); with a time budget, all confirmed so far."""
    with Judges("legacy", use_native=False, use_torch=False) as judges:
        shards = Campaign(judges, shards=2).shards
        shards._pool = pool = HoldingPool()
        parts = iter([{"random": [1, k, 1], "size": 1} for k in range(3 * LAG)])
        confirmed = Counter()
        shards.stream(lambda: next(parts, None), lambda *_: None, confirmed, None, settled)
    assert len(pool.seen) == 3 * LAG
    assert sum(confirmed.values()) == 3 * LAG
    if settled:
        assert pool.seen == [max(0, k - LAG) for k in range(3 * LAG)]
    else:
        # Everything but the slow first request's, until it answered after the others.
        assert pool.seen[: 2 * LAG] == [0, *range(2 * LAG - 1)]


def seeded(shards: int, cases: int, seed: int, folder: Path | None = None) -> Campaign:
    with Judges("legacy", jobs=shards, use_torch=False) as judges:
        run = Campaign(judges, folder, budget=Budget(cases=cases), shards=shards)
        random_engine.explore(run, seed, solved=False)
    return run


def test_a_seeded_case_budget_finds_the_same_with_any_number_of_shards(tmp_path):
    """Exactly the budget is judged, and the signatures, the witness kept for each and
    the crashes confirmed are the seed's, whichever shard answered first."""
    runs = [seeded(2, 3001, 4, tmp_path / "a"), seeded(3, 3001, 4), seeded(2, 3001, 4)]
    for run in runs:
        assert run.stats.cases == 3001 and not run.shard_failures
    witnesses = [{key: f.case for key, f in run.found.items()} for run in runs]
    assert len(witnesses[0]) >= 10  # legacy's bugs show in 3,000 cases
    assert witnesses[1] == witnesses[0] == witnesses[2]
    assert runs[1].confirmations == runs[0].confirmations == runs[2].confirmations
    written = {key for e in corpus.load_all(tmp_path / "a") for key in e.keys}
    assert written == {f.key for f in runs[0].found.values() if f.kind != "torch-bug"}
