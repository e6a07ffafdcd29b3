"""``WorkerPool``: batches of requests handed to worker processes, one result per request,
in order; a worker that crashes or hangs is replaced and the batch carries on."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any

from convcheck.errors import ConvcheckError
from convcheck.sandbox import protocol
from convcheck.sandbox.batch import Batch, Source
from convcheck.sandbox.crashes import Crash, Hang, death_reason
from convcheck.sandbox.descendants import MARKER, become_subreaper
from convcheck.sandbox.fork_server import ForkServer
from convcheck.sandbox.framing import RecordFraming, encode_request
from convcheck.sandbox.processes import (
    START_TIMEOUT,
    WORKER_MAIN,
    ForkRefused,
    Launch,
    Worker,
    WorkerSpec,
    close_fds,
    stop_all,
    worker_env,
)
from convcheck.validation import check_positive_int, check_seconds, invalid


class WorkerPool:
    """``jobs`` worker processes for one ``WorkerSpec``, started lazily, reused across runs.

    One ``run`` at a time. Close the pool (or use it as a context manager) to kill and
    reap the workers. They are also killed when the pool is garbage-collected or the
    interpreter exits, and by the kernel if the parent process dies (PR_SET_PDEATHSIG).
    """

    def __init__(self, spec: WorkerSpec, jobs: int = 1, timeout: float = 5.0) -> None:
        if not isinstance(spec, WorkerSpec):
            raise invalid("spec", spec, "be a WorkerSpec")
        self.spec = spec
        self.jobs = check_positive_int("jobs", jobs)
        self.timeout = check_seconds("timeout", timeout)
        self._env = worker_env(spec)
        self._workers: list[Worker] = []
        self._servers: list[ForkServer] = []  # the fork server, once started
        self._warming: list[ForkServer] = []  # started by ``warm``, not yet heard from
        # Workers forked ahead, for the next starts, oldest first: the server answers in
        # order, so they are adopted (and stopped) in this order. One per job for a
        # program, whose forked copy costs little: when both workers crash at once, the
        # second replacement is ready too. One for a Python worker.
        self._spares: list[Worker] = []
        self._spare_count = self.jobs if spec.program is not None else 1
        self._forking = spec.fork_server  # False once it proved unsafe or could not restart
        # weakref.finalize also registers itself with atexit; they run last first: the
        # spare's fork is answered before its server stops.
        weakref.finalize(self, stop_all, self._workers)
        weakref.finalize(self, stop_all, self._servers)
        weakref.finalize(self, stop_all, self._warming)
        weakref.finalize(self, stop_all, self._spares)
        self._ever_ready = False  # a worker has started: a later start failure is no set-up error
        self._lock = threading.Lock()  # held by the running batch
        self._batch_thread: int | None = None
        self._cancelled = False
        self._close_after_batch = False
        self._wake_read, self._wake_write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        weakref.finalize(self, close_fds, self._wake_read, self._wake_write)
        become_subreaper()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def warm(self) -> None:
        """Start the fork server now, without waiting for it: its start-up (a library to
        load, torch to import) then overlaps the caller's own, and the first ``run``
        finds it ready. Nothing for a pool without a fork server or with one running."""
        with self._lock:
            if self._forking and not self._servers and not self._warming:
                self._warming.append(ForkServer(self._env, self._launch(fork_server=True)))

    def cancel(self) -> None:
        """Abandon the running batch at once (its busy workers are killed) and return no
        result from any ``run`` until ``close``. Safe from another thread or a signal
        handler."""
        self._cancelled = True
        with suppress(BlockingIOError):
            os.write(self._wake_write, b"c")

    def close(self) -> None:
        """Kill and reap every worker; a later ``run`` starts new ones.

        A batch running in another thread is cancelled first, so this does not wait for
        a request that hangs. Called from a signal handler during a batch, the batch
        stops its workers on its way out.
        """
        self.cancel()
        if self._batch_thread == threading.get_ident():
            self._close_after_batch = True
            return
        with self._lock:
            self._reset()

    def run(
        self, requests: Sequence[dict[str, Any] | bytes], deadline: float | None = None
    ) -> list[dict[str, Any] | Crash | Hang | None]:
        """One result per request, in order: the handler's dict, a Crash or a Hang.

        None for a request left unfinished because the batch was cancelled or reached
        ``deadline`` (a ``time.monotonic()`` time).
        """
        if self.spec.program is None:
            lines = [encode_request(index, request) for index, request in enumerate(requests)]
        else:
            lines = [RecordFraming.encode(i, request) for i, request in enumerate(requests)]
        with self._running():
            if self._cancelled:
                return [None] * len(lines)
            return Batch(self, lines, deadline).run()

    def stream(
        self,
        next_request: Callable[[], dict[str, Any] | None],
        deliver: Callable[[int, dict[str, Any] | Crash | Hang | None], None],
        deadline: float | None = None,
        window: int = 2,
    ) -> None:
        """Requests as ``next_request`` gives them, each worker holding up to ``window``
        (the next ones wait in its pipe, so it never waits for the parent), and each
        result handed to ``deliver(number, result)`` as soon as it is in (numbers count
        the requests from 0): no worker waits for another.

        ``next_request`` returns None when it has nothing now; it is asked again after
        the next result, and the stream ends when it has nothing and no request is out.
        At a cancel or ``deadline`` the requests not finished are delivered as None. A
        Python worker's requests only (for a pool of a ``program``, ``run``).
        """
        if self.spec.program is not None:
            raise ConvcheckError("stream serves Python workers only")
        with self._running():
            if not self._cancelled:
                Batch(self, [], deadline, Source(next_request, deliver, window)).run()

    @contextmanager
    def _running(self) -> Iterator[None]:
        """The pool held by one batch (``run`` or ``stream``) in this thread."""
        with self._lock:
            self._batch_thread = threading.get_ident()
            try:
                yield
            except BaseException:
                # Ctrl-C, a worker that cannot start: no worker is left holding requests.
                stop_all(self._workers)
                raise
            finally:
                self._batch_thread = None
                if self._close_after_batch:
                    self._reset()

    def _reset(self) -> None:
        stop_all(self._workers)
        stop_all(self._spares)
        stop_all(self._servers)
        stop_all(self._warming)
        self._cancelled = self._close_after_batch = False
        with suppress(BlockingIOError):
            while os.read(self._wake_read, 64):
                pass

    def _launch(self, fork_server: bool) -> Launch:
        """How a worker (or, ``fork_server``, the fork server) is started."""
        if self.spec.program is None:
            command = [sys.executable, "-u", WORKER_MAIN]
            return Launch(command, [], self._start_line(fork_server))
        limit = self.spec.memory_limit_mb
        mode = protocol.MODE_FORK_SERVER if fork_server else protocol.MODE_SERVE
        memory = protocol.NO_LIMIT if limit is None or self.spec.sanitized else str(limit)
        return Launch([self.spec.program], [mode, memory, MARKER, *self.spec.config], b"")

    def _start_line(self, fork_server: bool) -> bytes:
        start = {
            "path": sys.path,
            "handler": self.spec.handler,
            "init": self.spec.init,
            "config": self.spec.config,
            "memory_limit_mb": None if self.spec.sanitized else self.spec.memory_limit_mb,
            "faulthandler": not self.spec.sanitized,
            "fork_server": fork_server,
            "marker": MARKER,
        }
        return json.dumps(start).encode() + protocol.END_OF_LINE

    def _start_worker(self) -> Worker:
        for server in self._servers:
            try:
                worker = self._spares.pop(0) if self._spares else Worker(self._env, None, server)
                worker.adopt()
            except ForkRefused as refused:
                stop_all(self._spares)
                stop_all(self._servers)
                # A server with threads stays unsafe; one that died is started again by
                # the next batch.
                self._forking = self._forking and not refused.for_good
                continue
            # The next one is forked now, while this one works: a crashed worker's
            # replacement is then ready at once, and the parent does not wait for a fork.
            with suppress(ForkRefused):  # seen by the next start
                while len(self._spares) < self._spare_count:
                    self._spares.append(Worker(self._env, None, server, adopt=False))
            return worker
        return Worker(self._env, self._launch(fork_server=False))

    def _start_server(self, deadline: float) -> bool:
        """Start the fork server; False if the batch is cancelled or reaches ``deadline``
        first. A server that cannot start is a set-up error if no worker of this pool ever
        started, else the pool starts its workers from now on."""
        if self._warming:
            server = self._warming.pop()
        else:
            server = ForkServer(self._env, self._launch(fork_server=True))
        line = server.read_line(min(deadline, time.monotonic() + START_TIMEOUT), self._wake_read)
        if line == protocol.STARTED:
            self._servers.append(server)
            self._ever_ready = True
            return True
        output = server.stop()
        if line is None and (self._cancelled or time.monotonic() >= deadline):
            return False
        if line:
            reason = line[1:].decode(errors="replace")
        elif line is None:
            reason = f"not ready within {START_TIMEOUT:g} s"
        else:
            reason = death_reason(server.process.returncode, output)
        if not self._ever_ready:
            raise ConvcheckError(f"worker for {self.spec.describe()} failed to start: {reason}")
        self._forking = False
        return True
