"""One batch of a ``WorkerPool``: its requests handed to the workers, a few ahead each, and
its results collected in order as they come; the deadline, the per-request timeout and the
RSS limit watched; a worker that crashes, hangs or cannot start replaced or done without."""

from __future__ import annotations

import os
import select
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from convcheck.errors import ConvcheckError
from convcheck.sandbox import protocol
from convcheck.sandbox.crashes import CRASH_REPORT_LIMIT, Crash, Hang, crash_of, death_reason
from convcheck.sandbox.framing import LineFraming, RecordFraming, encode_request
from convcheck.sandbox.processes import (
    RSS_INTERVAL,
    START_TIMEOUT,
    Child,
    Worker,
    WorkerSpec,
    stop_all,
)

# A worker past its timeout whose address space peaked above this share of its limit ran
# out of memory: a malloc near the limit fails, whatever was reserved before it.
_SPENT = 0.9

# Most requests sent ahead to one worker, so that it never waits for the parent. Fewer
# when the batch is small: each worker gets its share (slow requests run in parallel).
_WINDOW = 64


class Pool(Protocol):
    """What a batch asks of the pool that runs it (``pool.WorkerPool``): its spec and
    limits, its workers and how to start more, and what it keeps from batch to batch."""

    spec: WorkerSpec
    jobs: int
    timeout: float
    _workers: list[Worker]
    _forking: bool
    _cancelled: bool
    _ever_ready: bool
    _wake_read: int

    @property
    def _servers(self) -> Sequence[Child]: ...  # the fork server, once started

    def _start_server(self, deadline: float) -> bool: ...

    def _start_worker(self) -> Worker: ...


@dataclass
class Source:
    """Where a streaming batch (``WorkerPool.stream``) takes its requests and puts its
    results."""

    next_request: Callable[[], dict[str, Any] | None]
    deliver: Callable[[int, Any], None]
    window: int
    dry: bool = False  # it had nothing the last time: ask again after a result
    ended: bool = False  # no worker is left to serve what it would give

    def pull(self, number: int) -> bytes | None:
        if self.dry or self.ended:
            return None
        request = self.next_request()
        if request is None:
            self.dry = True
            return None
        return encode_request(number, request)


class Batch:
    """One ``run``: hands the requests to the pool's workers and collects the results;
    or, with a ``source``, one ``stream``."""

    def __init__(
        self,
        pool: Pool,
        lines: list[bytes],
        deadline: float | None,
        source: Source | None = None,
    ) -> None:
        self.pool = pool
        self.deadline = float("inf") if deadline is None else deadline
        self.workers = pool._workers
        self.lines = dict(enumerate(lines))
        self.results: list[Any] = [None] * len(lines)
        self.unsent = deque(range(len(lines)))
        self.left = len(lines)
        self.source = source
        self.pulled = 0  # requests taken from the source
        self.rss_limit_mb = pool.spec.memory_limit_mb if pool.spec.sanitized else None
        self.rss_check_at = 0.0
        self.framing = LineFraming if pool.spec.program is None else RecordFraming

    def run(self) -> list[dict[str, Any] | Crash | Hang | None]:
        for worker in [w for w in self.workers if w.exited()]:
            # Died while idle: no request to blame, so just replace it.
            worker.stop()
            self.workers.remove(worker)
        if self.source is not None and not self._pull():
            return self.results  # nothing to serve: no worker is started for it
        jobs = self.pool.jobs if self.source is not None else min(self.pool.jobs, self.left)
        if jobs > len(self.workers) and self.pool._forking and not self.pool._servers:
            if not self.pool._start_server(self.deadline):
                self._abandon()
                return self.results
        # Each start costs a fork or a process's start-up: at the deadline (or a cancel)
        # the batch starts no more, so a campaign of many jobs still ends on time.
        while len(self.workers) < jobs and not self._over():
            self.workers.append(self.pool._start_worker())
        while self.left or self._more():
            if self._over():
                self._abandon()
                break
            self._feed()
            if self.left or not all(worker.ready for worker in self.workers):
                self._wait()
        return self.results

    def _over(self) -> bool:
        return self.pool._cancelled or time.monotonic() >= self.deadline

    def _more(self) -> bool:
        """A stream whose source may still give requests."""
        return self.source is not None and not (self.source.dry or self.source.ended)

    def _result(self, index: int, result: Any) -> None:
        self.left -= 1
        if self.source is None:
            self.results[index] = result
            return
        del self.lines[index]
        self.source.dry = False  # what it waited for may be in
        self.source.deliver(index, result)

    def _pull(self) -> bool:
        """The source's next request, queued; False when it has none now."""
        line = None if self.source is None else self.source.pull(self.pulled)
        if line is None:
            return False
        self.lines[self.pulled] = line
        self.unsent.append(self.pulled)
        self.pulled += 1
        self.left += 1
        return True

    def _abandon(self) -> None:
        """Kill the workers that hold requests or are starting; the idle ones stay."""
        unfinished = [*self.unsent]
        doomed = [w for w in self.workers if w.held or not w.ready]
        for worker in doomed:
            unfinished += worker.held
            self.workers.remove(worker)
        stop_all(doomed)
        self.unsent.clear()
        if self.source is not None:
            self.source.ended = True
            for index in sorted(unfinished):
                self._result(index, None)
        self.left = 0

    def _feed(self) -> None:
        now = time.monotonic()
        if self.source is not None:
            window = self.source.window
        else:
            outstanding = len(self.unsent) + sum(len(worker.held) for worker in self.workers)
            window = min(_WINDOW, -(-outstanding // len(self.workers)))
        for worker in self.workers:
            while worker.ready and len(worker.held) < window:
                if not self.unsent and not self._pull():
                    break
                index = self.unsent.popleft()
                if not worker.held:
                    worker.since = now
                worker.held.append(index)
                worker.outgoing += self.lines[index]
            if worker.outgoing:
                worker.flush()

    def _wait(self) -> None:
        poller = select.poll()
        poller.register(self.pool._wake_read, select.POLLIN)
        owners: dict[int, Worker] = {}
        for worker in self.workers:
            for fd in (worker.result_fd, worker.exit_fd):
                poller.register(fd, select.POLLIN)
                owners[fd] = worker
            if worker.outgoing:
                poller.register(worker.request_fd, select.POLLOUT)
                owners[worker.request_fd] = worker
        deadline = min(worker.deadline(self.pool.timeout) for worker in self.workers)
        if self.rss_limit_mb is not None:
            deadline = min(deadline, self.rss_check_at)
        assert deadline < float("inf"), "requests left, but no worker holds or awaits any"
        deadline = min(deadline, self.deadline)
        for fd, _ in poller.poll(max(0.0, deadline - time.monotonic()) * 1000 + 1):
            if fd == self.pool._wake_read:
                continue  # the loop in run() sees why
            worker = owners[fd]
            if worker not in self.workers:
                continue  # replaced earlier in this loop; the fd number may be reused
            if fd == worker.request_fd:
                worker.flush()
            else:
                self._receive(worker, exited=fd == worker.exit_fd)
        now = time.monotonic()
        if self.rss_limit_mb is not None and now >= self.rss_check_at:
            self._check_rss(self.rss_limit_mb)
            self.rss_check_at = now + RSS_INTERVAL
        for worker in list(self.workers):
            if worker not in self.workers or worker.deadline(self.pool.timeout) > now:
                continue
            if not worker.ready:
                self._start_failed(worker, f"not ready within {START_TIMEOUT:g} s")
                continue
            self._replace(worker, self._hung(worker))

    def _hung(self, worker: Worker) -> Crash | Hang:
        """A worker past its timeout, stopped: a hang, or, when it had spent its address
        space (what a library that retries a failed malloc forever does), out of memory."""
        limit = None if self.pool.spec.sanitized else self.pool.spec.memory_limit_mb
        peak = worker.peak_mb() if limit is not None else None
        output = worker.stop()
        if limit is None or peak is None or peak < limit * _SPENT:
            return Hang(self.pool.timeout)
        note = f"convcheck: no result within {self.pool.timeout:g} s, address space "
        note += f"{peak} MB of memory_limit_mb {limit}\n"
        return Crash("out-of-memory", "", None, None, (output + note)[-CRASH_REPORT_LIMIT:])

    def _check_rss(self, limit_mb: int) -> None:
        for worker in [w for w in self.workers if w.held]:
            rss_mb = worker.rss_mb()
            if rss_mb > limit_mb:
                output = worker.stop()
                note = f"convcheck: worker killed, RSS {rss_mb} MB > memory_limit_mb {limit_mb}\n"
                report = (output + note)[-CRASH_REPORT_LIMIT:]
                self._replace(worker, Crash("out-of-memory", "", "SIGKILL", None, report))

    def _receive(self, worker: Worker, exited: bool = False) -> None:
        """Take the worker's results; once it has ``exited``, all it wrote, then its death.

        Its death is seen from its exit, not only from the end of its result pipe: a
        child the target forked may hold that pipe open.
        """
        while True:
            try:
                data = os.read(worker.result_fd, 1 << 16)
            except BlockingIOError:
                if not exited:
                    return
                data = b""
            if not data:
                if not worker.ready:
                    self._start_failed(worker)
                    return
                output = worker.stop()
                self._replace(worker, crash_of(worker.process.returncode, output))
                return
            if not self._take(worker, data) or not exited:
                return

    def _take(self, worker: Worker, data: bytes) -> bool:
        """The complete messages in ``data``; False if they made the worker stop."""
        lines, worker.partial = self.framing.split(worker.partial + data)
        for line in lines:
            if worker.ready:
                result = self.framing.decode(line)
                if result is None:
                    # Only the worker knows where its result pipe is: something in it
                    # went looking, or scribbled over memory.
                    note = f"convcheck: not a result on the result pipe: {line[:200]!r}\n"
                    report = (worker.stop() + note)[-CRASH_REPORT_LIMIT:]
                    self._replace(worker, Crash("corrupt-result", "", None, None, report))
                    return False
                self._result(worker.held.popleft(), result)
            elif line == protocol.STARTED:
                worker.ready = True
                self.pool._ever_ready = True
            else:
                self._start_failed(worker, line[1:].decode(errors="replace"))
                return False
        worker.since = time.monotonic()
        return True

    def _start_failed(self, worker: Worker, reason: str | None = None) -> None:
        """Stop a worker that never got ready, and go on without it while others run.

        With none left: a ConvcheckError (saying why, else how it died) if no worker of
        this pool ever started, else every request left gets a ``restart-failed`` Crash.
        """
        output = worker.stop()
        self.workers.remove(worker)
        if reason is None:
            reason = death_reason(worker.process.returncode, output)
        if self.workers:
            return
        if not self.pool._ever_ready:
            raise ConvcheckError(
                f"worker for {self.pool.spec.describe()} failed to start: {reason}"
            )
        report = (
            f"{output[-CRASH_REPORT_LIMIT // 2 :]}convcheck: no worker could restart: {reason}\n"
        )
        failed = Crash("restart-failed", "", None, None, report)
        if self.source is not None:
            self.source.ended = True
        while self.unsent:
            self._result(self.unsent.popleft(), failed)

    def _replace(self, worker: Worker, outcome: Crash | Hang) -> None:
        """Give the stopped worker's oldest request its outcome, and its others back.

        A worker that held none (it died between requests) has no request to blame.
        """
        first = worker.held.popleft() if worker.held else None
        self.unsent.extendleft(reversed(worker.held))
        worker.held.clear()
        position = self.workers.index(worker)
        if self.unsent or self._more():
            self.workers[position] = self.pool._start_worker()
        else:
            del self.workers[position]
        if first is not None:  # last: delivering may raise, or ask for more requests
            self._result(first, outcome)
