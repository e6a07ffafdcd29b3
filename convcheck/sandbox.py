"""Worker processes that may die: where native code and torch run.

A ``WorkerPool`` hands batches of JSON requests to worker processes and returns one
result per request, in order: the handler's dict, a ``Crash`` (the process died, or the
handler raised) or a ``Hang`` (no result within the timeout). A worker that crashes or
hangs is killed and replaced, and the batch carries on with the next request. A batch
can be abandoned (``cancel``, a ``deadline``): busy workers are killed at once, and the
requests that did not finish come back as None.

Every process a worker starts is reaped with it: the parent is a child subreaper
(PR_SET_CHILD_SUBREAPER), so a target's child that calls setsid and outlives its worker
comes back to the parent, which knows it by its session or by a marker in its
environment, and kills and reaps it. (A process that leaves the session *and* clears its
environment escapes; so does everything if the parent itself is SIGKILLed, which only a
cgroup would contain.) A worker that cannot be restarted after a crash (a library whose
constructor fails on a later load) is no set-up error: while other workers run, the pool
carries on without it; when none is left, each request left gets a ``restart-failed``
Crash. Only a pool whose very first worker cannot start raises.

With ``WorkerSpec.fork_server``, the workers are forked by a fork server: one process
that has started once (the sanitizer runtime, the handler's module, ``init``) and forks
a fresh worker in milliseconds, so a crash no longer costs a start. It forks workers
ahead (one; one per job for a program worker), so a crashed worker's replacement is ready
and the parent waits for no fork. A
forked worker is the parent's own child, with its own session, marker, timeout and
memory limit, exactly like a started one. When forking is not safe (the server has grown a
thread) or the server cannot start again, the pool falls back to starting workers.

The worker's side, and the protocol between the two, is ``convcheck/_worker_main.py``.
A worker may instead be a program (``WorkerSpec.program``, such as the native judge's C
worker, ``convcheck/native/worker_main.c``): it is started, or forked by its own fork
server, the same way, with the same guarantees; its requests and results are bytes,
framed as records (see ``_RecordFraming``).
"""

from __future__ import annotations

import ctypes
import functools
import json
import os
import queue
import re
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from convcheck.errors import ConvcheckError
from convcheck.sanitizer import classify, python_fault_site
from convcheck.validation import check_positive_int, check_seconds

__all__ = [
    "Crash",
    "Hang",
    "WorkerPool",
    "WorkerSpec",
    "own_session",
    "private_temporary_directory",
]

_WORKER_MAIN = str(Path(__file__).with_name("_worker_main.py"))
# A PyInstaller bundle (how OSS-Fuzz ships a Python fuzzer) has no interpreter beside it:
# it starts itself with this variable set, and the bundle's runtime hook
# (.clusterfuzzlite/pyinstaller_worker_hook.py) runs the ``-c`` code or the convcheck
# script named in its arguments instead of the harness.
FROZEN_PYTHON = "CONVCHECK_FROZEN_PYTHON"


def python_env() -> dict[str, str]:
    """What ``sys.executable`` needs in its environment to act as a Python interpreter."""
    if getattr(sys, "frozen", False):
        return {FROZEN_PYTHON: "1", "PYTHONUNBUFFERED": "1"}
    return {}


_REPORT_LIMIT = 8192  # characters of a crash's output kept in Crash.report
_PARSE_LIMIT = 65536  # bytes of a crash's output searched for a sanitizer report
_START_TIMEOUT = 120.0  # seconds; importing torch under ASan takes a while
_FORK_TIMEOUT = 10.0  # seconds for the fork server to answer: a fork, on a busy machine
# Most requests sent ahead to one worker, so that it never waits for the parent. Fewer
# when the batch is small: each worker gets its share (slow requests run in parallel).
_WINDOW = 64
# gcc 12's ASan, preloaded into Python, does not start the thread that enforces
# hard_rss_limit_mb (a binary linked with ASan does), so the parent watches a sanitized
# worker's RSS itself, this often (seconds).
_RSS_INTERVAL = 0.1
_NAME = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*")
# In every worker's environment, inherited by what it starts: tells its descendants apart
# from the parent's other children once they are orphans.
_MARKER = "CONVCHECK_SANDBOX_WORKER"
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
# A stack frame a sanitizer left unnamed: "#N 0xADDRESS  (/module.so+0xOFFSET)".
_UNNAMED_FRAME = re.compile(
    r"^(?P<head>\s*#(?P<number>\d+) 0x[0-9a-fA-F]+)\s+"
    r"\((?P<module>/[^()+]+)\+0x(?P<offset>[0-9a-fA-F]+)\)[ \t]*$",
    re.M,
)
_FRAME_NAMES: dict[tuple[str, int], tuple[str, str] | None] = {}  # addr2line's answers


@dataclass(frozen=True)
class WorkerSpec:
    """What a worker process runs: ``init(config)`` once, then ``handler(request) -> dict``.

    ``handler`` and ``init`` are ``"module:function"`` names, imported in the worker with
    the parent's ``sys.path``. Or ``program``, the path of an executable that serves
    requests as records (bytes in, bytes out; ``handler`` and ``init`` then unset), started
    as ``program REQUEST_FD RESULT_FD PARENT_PID MODE MEMORY_MB MARKER *config`` (MODE
    "serve" or "fork-server", MEMORY_MB "-" for none; ``config`` a list of strings).
    ``env`` is added to the worker's environment only.
    ``memory_limit_mb`` (None for no limit) caps the worker's address space; when
    ``sanitized`` (the worker loads an ASan library, which reserves terabytes of address
    space for its shadow) it adds ASan's RSS and allocation limits to ASAN_OPTIONS
    instead, and the pool kills a worker whose RSS goes over it during a request.
    ``fork_server``: workers are forked from a process that ran ``init`` once (see
    ``WorkerPool``); only for handlers and libraries that start no threads.
    """

    handler: str = ""
    init: str | None = None
    config: Any = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    memory_limit_mb: int | None = 4096
    sanitized: bool = False
    fork_server: bool = False
    program: str | None = None

    def __post_init__(self) -> None:
        if self.program is not None:
            self._check_program()
        elif not (isinstance(self.handler, str) and _NAME.fullmatch(self.handler)):
            raise ConvcheckError(f"handler {self.handler!r} is not a 'module:function' name")
        if self.init is not None and not (
            isinstance(self.init, str) and _NAME.fullmatch(self.init)
        ):
            raise ConvcheckError(f"init {self.init!r} is not a 'module:function' name")
        try:
            json.dumps(self.config)
        except (TypeError, ValueError) as exc:
            raise ConvcheckError(f"config {self.config!r} is not JSON-able: {exc}") from None
        if not isinstance(self.env, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in self.env.items()
        ):
            raise ConvcheckError(f"env {self.env!r} must map strings to strings")
        limit = self.memory_limit_mb
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
            raise ConvcheckError(f"memory_limit_mb {limit!r} is not an integer or None")
        if limit is not None and limit <= 0:
            raise ConvcheckError(f"memory_limit_mb {limit!r} is not positive")

    def _check_program(self) -> None:
        if not isinstance(self.program, str) or not os.path.isabs(self.program):
            raise ConvcheckError(f"program {self.program!r} is not an absolute path")
        if self.handler or self.init is not None:
            raise ConvcheckError(f"program {self.program}: no handler or init with a program")
        if not isinstance(self.config, list) or not all(isinstance(a, str) for a in self.config):
            raise ConvcheckError(f"program {self.program}: config must be a list of strings")

    def describe(self) -> str:
        parts = [self.handler or os.path.basename(self.program or "")]
        if self.init is not None:
            parts.append(f"init {self.init}")
        if self.memory_limit_mb is not None:
            parts.append(f"{self.memory_limit_mb} MB")
        if self.sanitized:
            parts.append("sanitized")
        if self.fork_server:
            parts.append("fork server")
        return ", ".join(parts)


@dataclass(frozen=True)
class Crash:
    """A request that killed its worker, or that made the handler raise.

    ``kind`` comes from a sanitizer report when there is one ("heap-buffer-overflow READ",
    "signed-integer-overflow", "SEGV null", "out-of-memory"), else from the signal
    ("SIGSEGV"), else "exit"; a handler's exception is "python-exception", and a result
    pipe that carried something other than results "corrupt-result". ``site`` says
    where ("conv_check_bias kernel.c:41", "ValueError: message"), or is "".
    ``report`` is the end of what the worker printed while it served the request.
    """

    kind: str
    site: str
    signal: str | None
    exit_status: int | None
    report: str = field(default="", repr=False)

    def describe(self) -> str:
        parts = [self.kind]
        if self.site:
            parts.append(self.site)
        if self.signal is not None and self.signal != self.kind:
            parts.append(self.signal)
        if self.exit_status is not None:
            parts.append(f"exit status {self.exit_status}")
        return "crash: " + ", ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "site": self.site,
            "signal": self.signal,
            "exit_status": self.exit_status,
        }


@dataclass(frozen=True)
class Hang:
    """A request with no result after ``timeout`` seconds; its worker was killed."""

    timeout: float

    def describe(self) -> str:
        return f"hang: no result within {self.timeout:g} s"

    def to_json(self) -> dict[str, Any]:
        return {"kind": "hang", "timeout": self.timeout}


class WorkerPool:
    """``jobs`` worker processes for one ``WorkerSpec``, started lazily, reused across runs.

    One ``run`` at a time. Close the pool (or use it as a context manager) to kill and
    reap the workers. They are also killed when the pool is garbage-collected or the
    interpreter exits, and by the kernel if the parent process dies (PR_SET_PDEATHSIG).
    """

    def __init__(self, spec: WorkerSpec, jobs: int = 1, timeout: float = 5.0) -> None:
        if not isinstance(spec, WorkerSpec):
            raise ConvcheckError(f"spec {spec!r} is not a WorkerSpec")
        self.spec = spec
        self.jobs = check_positive_int("jobs", jobs)
        self.timeout = check_seconds("timeout", timeout)
        self._env = _worker_env(spec)
        self._workers: list[_Worker] = []
        self._servers: list[_ForkServer] = []  # the fork server, once started
        self._warming: list[_ForkServer] = []  # started by ``warm``, not yet heard from
        # Workers forked ahead, for the next starts, oldest first: the server answers in
        # order, so they are adopted (and stopped) in this order. One per job for a
        # program, whose forked copy costs little: when both workers crash at once, the
        # second replacement is ready too. One for a Python worker.
        self._spares: list[_Worker] = []
        self._spare_count = self.jobs if spec.program is not None else 1
        self._forking = spec.fork_server  # False once it proved unsafe or could not restart
        # weakref.finalize also registers itself with atexit; they run last first: the
        # spare's fork is answered before its server stops.
        weakref.finalize(self, _stop_all, self._workers)
        weakref.finalize(self, _stop_all, self._servers)
        weakref.finalize(self, _stop_all, self._warming)
        weakref.finalize(self, _stop_all, self._spares)
        self._ever_ready = False  # a worker has started: a later start failure is no set-up error
        self._lock = threading.Lock()  # held by the running batch
        self._batch_thread: int | None = None
        self._cancelled = False
        self._close_after_batch = False
        self._wake_read, self._wake_write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        weakref.finalize(self, _close_fds, self._wake_read, self._wake_write)
        _become_subreaper()

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
                self._warming.append(_ForkServer(self._env, self._launch(fork_server=True)))

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
            lines = [_encode(index, request) for index, request in enumerate(requests)]
        else:
            lines = [_RecordFraming.encode(i, request) for i, request in enumerate(requests)]
        with self._running():
            if self._cancelled:
                return [None] * len(lines)
            return _Batch(self, lines, deadline).run()

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
                _Batch(self, [], deadline, _Source(next_request, deliver, window)).run()

    @contextmanager
    def _running(self) -> Iterator[None]:
        """The pool held by one batch (``run`` or ``stream``) in this thread."""
        with self._lock:
            self._batch_thread = threading.get_ident()
            try:
                yield
            except BaseException:
                # Ctrl-C, a worker that cannot start: no worker is left holding requests.
                _stop_all(self._workers)
                raise
            finally:
                self._batch_thread = None
                if self._close_after_batch:
                    self._reset()

    def _reset(self) -> None:
        _stop_all(self._workers)
        _stop_all(self._spares)
        _stop_all(self._servers)
        _stop_all(self._warming)
        self._cancelled = self._close_after_batch = False
        with suppress(BlockingIOError):
            while os.read(self._wake_read, 64):
                pass

    def _launch(self, fork_server: bool) -> _Launch:
        """How a worker (or, ``fork_server``, the fork server) is started."""
        if self.spec.program is None:
            command = [sys.executable, "-u", _WORKER_MAIN]
            return _Launch(command, [], self._start_line(fork_server))
        limit = self.spec.memory_limit_mb
        mode = "fork-server" if fork_server else "serve"
        memory = "-" if limit is None or self.spec.sanitized else str(limit)
        return _Launch([self.spec.program], [mode, memory, _MARKER, *self.spec.config], b"")

    def _start_line(self, fork_server: bool) -> bytes:
        start = {
            "path": sys.path,
            "handler": self.spec.handler,
            "init": self.spec.init,
            "config": self.spec.config,
            "memory_limit_mb": None if self.spec.sanitized else self.spec.memory_limit_mb,
            "faulthandler": not self.spec.sanitized,
            "fork_server": fork_server,
            "marker": _MARKER,
        }
        return (json.dumps(start) + "\n").encode()

    def _start_worker(self) -> _Worker:
        for server in self._servers:
            try:
                worker = self._spares.pop(0) if self._spares else _Worker(self._env, None, server)
                worker.adopt()
            except _ForkRefused as refused:
                _stop_all(self._spares)
                _stop_all(self._servers)
                # A server with threads stays unsafe; one that died is started again by
                # the next batch.
                self._forking = self._forking and not refused.for_good
                continue
            # The next one is forked now, while this one works: a crashed worker's
            # replacement is then ready at once, and the parent does not wait for a fork.
            with suppress(_ForkRefused):  # seen by the next start
                while len(self._spares) < self._spare_count:
                    self._spares.append(_Worker(self._env, None, server, adopt=False))
            return worker
        return _Worker(self._env, self._launch(fork_server=False))

    def _start_server(self, deadline: float) -> bool:
        """Start the fork server; False if the batch is cancelled or reaches ``deadline``
        first. A server that cannot start is a set-up error if no worker of this pool ever
        started, else the pool starts its workers from now on."""
        if self._warming:
            server = self._warming.pop()
        else:
            server = _ForkServer(self._env, self._launch(fork_server=True))
        line = server.read_line(min(deadline, time.monotonic() + _START_TIMEOUT), self._wake_read)
        if line == b"S":
            self._servers.append(server)
            self._ever_ready = True
            return True
        output = server.stop()
        if line is None and (self._cancelled or time.monotonic() >= deadline):
            return False
        if line:
            reason = line[1:].decode(errors="replace")
        elif line is None:
            reason = f"not ready within {_START_TIMEOUT:g} s"
        else:
            reason = _death_reason(server.process.returncode, output)
        if not self._ever_ready:
            raise ConvcheckError(f"worker for {self.spec.describe()} failed to start: {reason}")
        self._forking = False
        return True


def _close_fds(*fds: int) -> None:
    for fd in fds:
        os.close(fd)


@dataclass
class _Source:
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
        return _encode(number, request)


class _Batch:
    """One ``run``: hands the requests to the pool's workers and collects the results;
    or, with a ``source``, one ``stream``."""

    def __init__(
        self,
        pool: WorkerPool,
        lines: list[bytes],
        deadline: float | None,
        source: _Source | None = None,
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
        self.framing = _LineFraming if pool.spec.program is None else _RecordFraming

    def run(self) -> list[dict[str, Any] | Crash | Hang | None]:
        for worker in [w for w in self.workers if w.exited()]:
            # Died while idle: no request to blame, so just replace it.
            worker.stop()
            self.workers.remove(worker)
        jobs = self.pool.jobs if self.source is not None else min(self.pool.jobs, self.left)
        if jobs > len(self.workers) and self.pool._forking and not self.pool._servers:
            if not self.pool._start_server(self.deadline):
                self._abandon()
                return self.results
        while len(self.workers) < jobs:
            self.workers.append(self.pool._start_worker())
        while self.left or self._more():
            if self.pool._cancelled or time.monotonic() >= self.deadline:
                self._abandon()
                break
            self._feed()
            if self.left or not all(worker.ready for worker in self.workers):
                self._wait()
        return self.results

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
        for worker in [w for w in self.workers if w.held or not w.ready]:
            unfinished += worker.held
            worker.stop()
            self.workers.remove(worker)
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
        owners: dict[int, _Worker] = {}
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
            self.rss_check_at = now + _RSS_INTERVAL
        for worker in list(self.workers):
            if worker not in self.workers or worker.deadline(self.pool.timeout) > now:
                continue
            if not worker.ready:
                self._start_failed(worker, f"not ready within {_START_TIMEOUT:g} s")
                continue
            worker.stop()
            self._replace(worker, Hang(self.pool.timeout))

    def _check_rss(self, limit_mb: int) -> None:
        for worker in [w for w in self.workers if w.held]:
            rss_mb = worker.rss_mb()
            if rss_mb > limit_mb:
                output = worker.stop()
                note = f"convcheck: worker killed, RSS {rss_mb} MB > memory_limit_mb {limit_mb}\n"
                report = (output + note)[-_REPORT_LIMIT:]
                self._replace(worker, Crash("out-of-memory", "", "SIGKILL", None, report))

    def _receive(self, worker: _Worker, exited: bool = False) -> None:
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
                self._replace(worker, _crash(worker.process.returncode, output))
                return
            if not self._take(worker, data) or not exited:
                return

    def _take(self, worker: _Worker, data: bytes) -> bool:
        """The complete messages in ``data``; False if they made the worker stop."""
        lines, worker.partial = self.framing.split(worker.partial + data)
        for line in lines:
            if worker.ready:
                result = self.framing.decode(line)
                if result is None:
                    # Only the worker knows where its result pipe is: something in it
                    # went looking, or scribbled over memory.
                    note = f"convcheck: not a result on the result pipe: {line[:200]!r}\n"
                    report = (worker.stop() + note)[-_REPORT_LIMIT:]
                    self._replace(worker, Crash("corrupt-result", "", None, None, report))
                    return False
                self._result(worker.held.popleft(), result)
            elif line == b"S":
                worker.ready = True
                self.pool._ever_ready = True
            else:
                self._start_failed(worker, line[1:].decode(errors="replace"))
                return False
        worker.since = time.monotonic()
        return True

    def _start_failed(self, worker: _Worker, reason: str | None = None) -> None:
        """Stop a worker that never got ready, and go on without it while others run.

        With none left: a ConvcheckError (saying why, else how it died) if no worker of
        this pool ever started, else every request left gets a ``restart-failed`` Crash.
        """
        output = worker.stop()
        self.workers.remove(worker)
        if reason is None:
            reason = _death_reason(worker.process.returncode, output)
        if self.workers:
            return
        if not self.pool._ever_ready:
            raise ConvcheckError(
                f"worker for {self.pool.spec.describe()} failed to start: {reason}"
            )
        report = f"{output[-_REPORT_LIMIT // 2 :]}convcheck: no worker could restart: {reason}\n"
        failed = Crash("restart-failed", "", None, None, report)
        if self.source is not None:
            self.source.ended = True
        while self.unsent:
            self._result(self.unsent.popleft(), failed)

    def _replace(self, worker: _Worker, outcome: Crash | Hang) -> None:
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


class _Child:
    """A process of the pool's, worker or fork server: its output file, its result pipe,
    how it is stopped. ``_channel`` is the parent's end of the way requests go to it.
    ``pending``: the fork server asked to fork it, whose answer (its pid) is not read yet
    (see ``adopt``)."""

    _count = 0
    pending: _ForkServer | None = None
    marker: str
    process: subprocess.Popen[bytes] | _Adopted

    def _open(
        self, env: dict[str, str], channel: int, server: _ForkServer | None, launch: _Launch | None
    ) -> None:
        """Start the process as ``launch`` says, or ask ``server`` to fork it; it reads from
        ``channel``, which is closed here."""
        # The process's stdout and stderr: emptied by a worker before each request.
        self.output = tempfile.TemporaryFile()
        self.result_fd, result_write = os.pipe()
        try:
            if server is None:
                assert launch is not None  # a process the pool starts itself
                self.process = _SPAWNER.popen(
                    launch.argv(channel, result_write),
                    stdin=subprocess.DEVNULL,
                    stdout=self.output,
                    stderr=self.output,
                    pass_fds=(channel, result_write),
                    env={**env, **python_env(), _MARKER: self.marker},
                    start_new_session=True,  # Ctrl-C at the terminal is the parent's to handle
                )
            else:
                server.send_fork(channel, result_write, self.output)
                self.pending = server
        except BaseException:
            os.close(self.result_fd)
            self.output.close()
            raise
        finally:
            os.close(channel)
            os.close(result_write)
        if server is None:
            self._opened()

    def adopt(self) -> None:
        """Take the process the fork server forked, once it says which (at once if
        nothing is pending)."""
        server, self.pending = self.pending, None
        if server is None:
            return
        try:
            self.process = server.forked()
        except BaseException:
            os.close(self.result_fd)
            self.output.close()
            self._close_channel()
            raise
        self.marker = server.marker_of(self.process.pid)
        self._opened()

    def _opened(self) -> None:
        os.set_blocking(self.result_fd, False)
        self.exit_fd = os.pidfd_open(self.process.pid)  # readable once the process has exited
        self.started = time.monotonic()
        _POOL_PROCESSES.add(self.process.pid)

    @staticmethod
    def _new_marker() -> str:
        _Child._count += 1
        return f"{os.getpid()}.{_Child._count}"

    def exited(self) -> bool:
        """Dead, but not reaped yet (so that stop() can still find what it left)."""
        return bool(select.select([self.exit_fd], [], [], 0)[0])

    def stop(self) -> str:
        """Kill the process and everything it started, reap them; return the end of what
        the process printed."""
        try:
            self.adopt()
        except _ForkRefused:
            return ""  # the server died before it answered: it forked nothing we know of
        pid = self.process.pid
        killed = set()
        # A process that has exited has no descendants left: they came to this process
        # (the subreaper) when it died, and _reap_orphans finds them.
        if self.process.returncode is None and not self.exited():
            # Its descendants first, while they are still known by their parent.
            killed = _descendants(pid)
            for descendant in killed:
                with suppress(ProcessLookupError):
                    os.kill(descendant, signal.SIGKILL)
            with suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
            with suppress(ProcessLookupError):  # a forked worker, before its setsid
                os.kill(pid, signal.SIGKILL)
        # Dead but not reaped: its pid, the session id its descendants are known by, cannot
        # be reused while they are looked for.
        with suppress(ChildProcessError):
            os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
        _reap_orphans(killed, session=pid, marker=f"{_MARKER}={self.marker}".encode())
        self.process.wait()
        _POOL_PROCESSES.discard(pid)
        self._close_channel()
        os.close(self.result_fd)
        os.close(self.exit_fd)
        with self.output:
            fd = self.output.fileno()
            size = os.fstat(fd).st_size
            start = max(0, size - _PARSE_LIMIT)
            return os.pread(fd, size - start, start).decode(errors="replace")

    def _close_channel(self) -> None:
        raise NotImplementedError


class _Worker(_Child):
    """One worker process, the parent's ends of its pipes, and the requests it holds.

    Started as ``launch`` says, or forked by ``server`` (then already started; with
    ``adopt`` false, taken as this worker's later, see ``adopt``)."""

    def __init__(
        self,
        env: dict[str, str],
        launch: _Launch | None,
        server: _ForkServer | None = None,
        adopt: bool = True,
    ) -> None:
        self.marker = self._new_marker()
        request_read, self.request_fd = os.pipe()
        try:
            self._open(env, request_read, server, launch)
        except BaseException:
            os.close(self.request_fd)
            raise
        os.set_blocking(self.request_fd, False)
        self.ready = False
        self.held: deque[int] = deque()  # indices of the requests sent, oldest first
        self.since = 0.0  # when the oldest held request started waiting for its result
        self.outgoing = bytearray(b"" if launch is None else launch.start_line)
        self.partial = b""
        if adopt:
            self.adopt()

    def deadline(self, timeout: float) -> float:
        if not self.ready:
            return self.started + _START_TIMEOUT
        return self.since + timeout if self.held else float("inf")

    def rss_mb(self) -> int:
        # Safe to read by pid: an unreaped child's pid cannot be reused.
        with open(f"/proc/{self.process.pid}/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") >> 20

    def flush(self) -> None:
        try:
            written = os.write(self.request_fd, self.outgoing)
        except BlockingIOError:
            return
        except BrokenPipeError:
            # The worker is gone; the end of its result pipe will say how.
            self.outgoing.clear()
            return
        del self.outgoing[:written]

    def _close_channel(self) -> None:
        os.close(self.request_fd)


class _ForkRefused(Exception):
    """The fork server did not fork: ``for_good`` when it never will (it has threads),
    else it died or did not answer."""

    def __init__(self, for_good: bool) -> None:
        super().__init__()
        self.for_good = for_good


class _ForkServer(_Child):
    """The process that forks workers (see ``_worker_main``), started as ``launch`` says.

    Its marker ends in a fixed-width number, which each worker it forks overwrites with
    its own pid, in place: so the parent knows every forked worker's marker.
    """

    def __init__(self, env: dict[str, str], launch: _Launch) -> None:
        self.base = self._new_marker()
        self.marker = self.marker_of(0)
        self.socket, theirs = socket.socketpair()
        try:
            self._open(env, theirs.detach(), None, launch)
        except BaseException:
            self.socket.close()
            raise
        self.partial = b""
        with suppress(BrokenPipeError):  # it died at once: read_line says how
            self.socket.sendall(launch.start_line)

    def marker_of(self, pid: int) -> str:
        return f"{self.base}.{pid:010d}"

    def send_fork(self, request_read: int, result_write: int, output: Any) -> None:
        """Ask for a new worker reading ``request_read``, writing ``result_write`` and
        ``output``; ``forked`` reads the answer."""
        try:
            socket.send_fds(self.socket, [b"F"], [request_read, result_write, output.fileno()])
        except OSError:
            raise _ForkRefused(for_good=False) from None

    def forked(self) -> _Adopted:
        """The worker asked for last: the server answers in order."""
        line = self.read_line(time.monotonic() + _FORK_TIMEOUT)
        if line and line[:1] == b"P":
            return _Adopted(int(line[1:]))
        raise _ForkRefused(for_good=line is not None and line[:1] == b"T")

    def read_line(self, until: float, wake_fd: int | None = None) -> bytes | None:
        """The server's next line; b"" once it has died; None at ``until`` (a
        ``time.monotonic()`` time) or when ``wake_fd`` is readable."""
        while b"\n" not in self.partial:
            poller = select.poll()
            for fd in (self.result_fd, self.exit_fd, wake_fd):
                if fd is not None:
                    poller.register(fd, select.POLLIN)
            timeout = max(0.0, until - time.monotonic()) * 1000 + 1
            ready = [fd for fd, _ in poller.poll(timeout)]
            if self.result_fd in ready:
                data = os.read(self.result_fd, 4096)
                if not data:
                    return b""
                self.partial += data
            elif self.exit_fd in ready:
                return b""
            elif ready or time.monotonic() >= until:
                return None
        line, _, self.partial = self.partial.partition(b"\n")
        return line

    def _close_channel(self) -> None:
        self.socket.close()


class _Adopted:
    """A forked worker: the parent's child (forked with CLONE_PARENT), waited for as a
    Popen is."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def wait(self) -> int:
        if self.returncode is None:
            _, status = os.waitpid(self.pid, 0)
            self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode


@dataclass(frozen=True)
class _Launch:
    """How a process of the pool is started: ``command``, its three descriptor arguments
    (request fd, result fd, the parent's pid), ``arguments``; then ``start_line`` sent."""

    command: list[str]
    arguments: list[str]
    start_line: bytes

    def argv(self, channel: int, result_write: int) -> list[str]:
        fds = [str(channel), str(result_write), str(os.getpid())]
        return [*self.command, *fds, *self.arguments]


def _stop_all(processes: list[_Worker] | list[_ForkServer]) -> None:
    """Stop each, in order (spares: the order the server answers in)."""
    while processes:
        processes.pop(0).stop()


# -- descendants ----------------------------------------------------------------------------


def _libc_prctl() -> Callable[..., int]:
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    prctl.restype = ctypes.c_int
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    return prctl


_prctl = _libc_prctl()  # resolved here: _die_with_parent runs between fork and exec
# The workers and fork servers of every pool of this process, until reaped: never orphans.
_POOL_PROCESSES: set[int] = set()
_subreaper_pid: int | None = None


def _become_subreaper() -> None:
    """Orphaned descendants of this process become its children, not init's."""
    global _subreaper_pid
    if _subreaper_pid != os.getpid():
        _prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        _subreaper_pid = os.getpid()


def own_session() -> dict[str, Any]:
    """``subprocess.Popen`` arguments for a child in a session of its own (Ctrl-C at the
    terminal is this process's to handle) that is SIGKILLed when this process dies
    (PR_SET_PDEATHSIG; start it from a thread that lives as long as the child)."""
    return {"start_new_session": True, "preexec_fn": _die_with_parent(os.getpid())}


def _die_with_parent(parent: int) -> Callable[[], None]:
    def preexec() -> None:  # between fork and exec: system calls only
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before prctl took effect
            os.kill(os.getpid(), signal.SIGKILL)

    return preexec


def _children(pid: int) -> set[int]:
    found: set[int] = set()
    with suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with suppress(OSError), open(f"/proc/{pid}/task/{task}/children") as children:
                found.update(int(child) for child in children.read().split())
    return found


def _descendants(pid: int) -> set[int]:
    found: set[int] = set()
    pending = [pid]
    while pending:
        for child in _children(pending.pop()) - found:
            found.add(child)
            pending.append(child)
    return found


def _started_by_worker(pid: int, session: int, marker: bytes) -> bool:
    """In the worker's session, or (after a setsid) still carrying its marker."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            if int(stat.read().rpartition(")")[2].split()[3]) == session:
                return True
        with open(f"/proc/{pid}/environ", "rb") as environ:
            return marker in environ.read().split(b"\0")
    except (OSError, IndexError, ValueError):
        return False


def _reap_orphans(killed: set[int], session: int, marker: bytes) -> None:
    """Kill and reap what a dead worker left behind: its descendants come to this process
    (the subreaper) as their parents die, one generation at a time."""
    while True:
        pending = {
            child
            # Not the worker (its Popen reaps it), nor the pools' other processes.
            for child in _children(os.getpid()) - {session} - _POOL_PROCESSES
            if child in killed or _started_by_worker(child, session, marker)
        }
        if not pending:
            return
        for pid in pending:
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for pid in pending:
            with suppress(ChildProcessError):
                os.waitpid(pid, 0)


@contextmanager
def private_temporary_directory(prefix: str) -> Iterator[Path]:
    """A temporary directory named ``<prefix><pid>-...``, removed on the way out.

    A process killed with SIGKILL cannot clean up: the folders of dead owners with this
    prefix are removed here, the next time one is made.
    """
    root = Path(tempfile.gettempdir())
    for left in root.glob(f"{prefix}*"):
        owner = left.name[len(prefix) :].partition("-")[0]
        if owner.isdigit() and not _alive(int(owner)):
            shutil.rmtree(left, ignore_errors=True)
    with tempfile.TemporaryDirectory(prefix=f"{prefix}{os.getpid()}-") as folder:
        yield Path(folder)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class _Spawner:
    """Starts worker processes from one thread that never exits.

    PR_SET_PDEATHSIG fires when the *thread* that started the child exits, not the
    process: a worker started from a short-lived thread would be killed along with it.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pid: int | None = None
        self._requests: queue.SimpleQueue = queue.SimpleQueue()

    def popen(self, *args: Any, **kwargs: Any) -> subprocess.Popen:
        future: Future = Future()
        with self._lock:
            if self._pid != os.getpid():  # first use, or a forked child without the thread
                self._requests = queue.SimpleQueue()
                threading.Thread(
                    target=_spawn_forever,
                    args=(self._requests,),
                    name="convcheck-spawner",
                    daemon=True,
                ).start()
                self._pid = os.getpid()
            self._requests.put((future, args, kwargs))
        try:
            return future.result()
        except BaseException:
            future.add_done_callback(_kill_unwanted)  # interrupted while it was starting
            raise


def _spawn_forever(requests: queue.SimpleQueue) -> None:
    while True:
        future, args, kwargs = requests.get()
        try:
            future.set_result(subprocess.Popen(*args, **kwargs))
        except BaseException as exc:
            future.set_exception(exc)


def _kill_unwanted(future: Future) -> None:
    if future.exception() is None:
        process = future.result()
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


_SPAWNER = _Spawner()


def _worker_env(spec: WorkerSpec) -> dict[str, str]:
    env = {**os.environ, **spec.env}
    if spec.sanitized and spec.memory_limit_mb is not None:
        limit = spec.memory_limit_mb
        limits = f"allocator_may_return_null=0:max_allocation_size_mb={limit}"
        if spec.program is None:
            limits = f"hard_rss_limit_mb={limit}:{limits}"
        # A program linked with ASan enforces hard_rss_limit_mb from a thread of its own,
        # which would keep its fork server from forking: the pool watches the RSS instead.
        given = env.get("ASAN_OPTIONS")
        env["ASAN_OPTIONS"] = f"{given}:{limits}" if given else limits
    return env


def _encode(index: int, request: object) -> bytes:
    if not isinstance(request, dict):
        raise ConvcheckError(f"request {index} is a {type(request).__name__}, not a dict")
    try:
        return (json.dumps(request) + "\n").encode()
    except (TypeError, ValueError) as exc:
        raise ConvcheckError(f"request {index} is not JSON-able: {exc}") from None


class _LineFraming:
    """A Python worker's results: lines, ``R<json>`` or ``E<json>`` (see ``_decode``)."""

    @staticmethod
    def split(data: bytes) -> tuple[list[bytes], bytes]:
        *lines, partial = data.split(b"\n")
        return lines, partial

    @staticmethod
    def decode(line: bytes) -> dict[str, Any] | Crash | None:
        return _decode(line)


class _RecordFraming:
    """A program worker's messages, both ways: a length (uint32, the machine's byte order),
    then that many bytes. From the worker: ``S``, ``F<message>``, ``R<answer>`` (its bytes
    are the result) or ``E<site><report>`` (the program could not answer: a
    "python-exception" Crash; each string a uint32 length and UTF-8 bytes)."""

    _LENGTH = struct.Struct("=I")
    _LIMIT = 1 << 28  # bytes: no answer is this long; a longer length is garbage

    @classmethod
    def encode(cls, index: int, request: object) -> bytes:
        if not isinstance(request, bytes):
            raise ConvcheckError(f"request {index} is a {type(request).__name__}, not bytes")
        return cls._LENGTH.pack(len(request)) + request

    @classmethod
    def split(cls, data: bytes) -> tuple[list[bytes], bytes]:
        """The complete messages, and what is left; an empty message (no message's form)
        when a length is garbage, and the rest dropped."""
        messages: list[bytes] = []
        at = 0
        while len(data) - at >= 4:
            (length,) = cls._LENGTH.unpack_from(data, at)
            if length > cls._LIMIT:
                messages.append(b"")
                return messages, b""
            if len(data) - at - 4 < length:
                break
            messages.append(data[at + 4 : at + 4 + length])
            at += 4 + length
        return messages, data[at:]

    @classmethod
    def decode(cls, message: bytes) -> bytes | Crash | None:
        tag = message[:1]
        if tag == b"R":
            return message[1:]
        if tag != b"E":
            return None
        try:
            site, at = record_string(message, 1)
            report, at = record_string(message, at)
        except (struct.error, ValueError):
            return None
        if at != len(message):
            return None
        first = site.strip().splitlines()[:1]
        return Crash("python-exception", first[0][:200] if first else "", None, None, report)


def _decode(line: bytes) -> dict[str, Any] | Crash | None:
    """A worker's result line as a result, or None when it is not one."""
    tag = line[:1]
    try:
        message = json.loads(line[1:])
    except ValueError:
        return None
    if not isinstance(message, dict):
        return None
    if tag == b"R":
        return message
    site, report = message.get("site"), message.get("report")
    if tag != b"E" or not isinstance(site, str) or not isinstance(report, str):
        return None
    return Crash("python-exception", site, None, None, report)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _death_reason(returncode: int | None, output: str) -> str:
    """Why a process that should have started died: how, and its last line."""
    crash = _crash(returncode, output)
    last = output.strip().splitlines()[-1:]
    reason = crash.describe()
    if crash.kind == "exit" and last:
        reason += f": {last[0]}"
    return reason


def _crash(returncode: int | None, output: str) -> Crash:
    """The Crash for a worker that died with ``returncode`` after printing ``output``."""
    assert returncode is not None  # the process is reaped (``_Child.stop``)
    output = _name_frames(output)
    signal_name = _signal_name(-returncode) if returncode < 0 else None
    exit_status = returncode if returncode >= 0 else None
    found = classify(output)
    if found is None:
        kind, site = signal_name or "exit", python_fault_site(output)
    else:
        kind, site = found
    return Crash(kind, site, signal_name, exit_status, output[-_REPORT_LIMIT:])


def _name_frames(output: str) -> str:
    """``output`` with its unnamed frames named, as the sanitizer would name them ("in
    function file:line").

    A sanitizer symbolizes in the worker that crashed, and a forked worker spends a good
    part of its crash reading debug information for it, again and again; the native judge
    tells it not to, and the parent names the frames here instead, asking addr2line once
    per address.
    """
    frames = list(_UNNAMED_FRAME.finditer(output))
    if not frames or _addr2line_path() is None:
        return output
    unknown: dict[str, list[int]] = {}
    for frame in frames:
        module, offset = _frame_address(frame)
        if (module, offset) not in _FRAME_NAMES:
            unknown.setdefault(module, []).append(offset)
    for module, offsets in unknown.items():
        _FRAME_NAMES.update(_addr2line(module, sorted(set(offsets))))

    def named(frame: re.Match) -> str:
        found = _FRAME_NAMES.get(_frame_address(frame))
        return f"{frame['head']} in {found[0]} {found[1]}" if found else frame[0]

    return _UNNAMED_FRAME.sub(named, output)


def _frame_address(frame: re.Match) -> tuple[str, int]:
    # Above frame #0 the address is a return address: the call is the byte before.
    return frame["module"], int(frame["offset"], 16) - (frame["number"] != "0")


@functools.cache
def _addr2line_path() -> str | None:
    return shutil.which("addr2line")  # once: PATH's directories cost a stat each, per crash


def _addr2line(module: str, offsets: list[int]) -> dict[tuple[str, int], tuple[str, str] | None]:
    """``(function, "file:line")`` of each offset in ``module`` (the innermost inlined
    function), or None where addr2line does not know."""
    names: dict[tuple[str, int], tuple[str, str] | None] = {(module, o): None for o in offsets}
    addr2line = _addr2line_path()
    assert addr2line is not None  # asked only where there is one (``_name_frames``)
    try:
        done = subprocess.run(
            [addr2line, "-a", "-f", "-i", "-C", "-e", module] + [hex(o) for o in offsets],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return names
    lines = done.stdout.splitlines()
    for at, line in enumerate(lines[:-2]):
        if not line.startswith("0x"):
            continue
        function, location = lines[at + 1], lines[at + 2].partition(" (discriminator")[0]
        if function != "??" and not location.startswith("??"):
            names[module, int(line, 16)] = (function, location)
    return names


def record_string(message: bytes, at: int) -> tuple[str, int]:
    """The string of a record at ``at`` (a uint32 length, then UTF-8 bytes), and where the
    record goes on; ValueError (or struct.error) when it runs past the end."""
    (length,) = _RecordFraming._LENGTH.unpack_from(message, at)
    end = at + 4 + length
    if end > len(message):
        raise ValueError("past the end")
    return message[at + 4 : end].decode(errors="replace"), end
