"""One worker process, started here or forked by the fork server (``fork_server``): its
spec (``WorkerSpec``), its limits (timeout, memory), its start, its stop; and the one
thread that starts processes. A pool's batch (``batch``) hands them requests."""

from __future__ import annotations

import json
import os
import queue
import re
import select
import signal
import subprocess
import tempfile
import threading
import time
from collections import deque
from concurrent.futures import Future
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from convcheck.sandbox.crashes import PARSE_LIMIT
from convcheck.sandbox.descendants import (
    MARKER,
    POOL_PROCESSES,
    descendants_of,
    python_env,
    reap_orphans,
)
from convcheck.validation import check_positive_int, invalid

WORKER_MAIN = str(Path(__file__).parent.parent / "_worker_main.py")


START_TIMEOUT = 120.0  # seconds; importing torch under ASan takes a while


# gcc 12's ASan, preloaded into Python, does not start the thread that enforces
# hard_rss_limit_mb (a binary linked with ASan does), so the parent watches a sanitized
# worker's RSS itself, this often (seconds).
RSS_INTERVAL = 0.1


_NAME = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*")


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
            raise invalid("handler", self.handler, "be a 'module:function' name")
        if self.init is not None and not (
            isinstance(self.init, str) and _NAME.fullmatch(self.init)
        ):
            raise invalid("init", self.init, "be a 'module:function' name or None")
        try:
            json.dumps(self.config)
        except (TypeError, ValueError) as exc:
            raise invalid("config", self.config, f"be JSON-able ({exc})") from None
        if not isinstance(self.env, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in self.env.items()
        ):
            raise invalid("env", self.env, "map strings to strings")
        if self.memory_limit_mb is not None:
            check_positive_int("memory_limit_mb", self.memory_limit_mb)

    def _check_program(self) -> None:
        if not isinstance(self.program, str) or not os.path.isabs(self.program):
            raise invalid("program", self.program, "be an absolute path")
        if self.handler or self.init is not None:
            raise invalid("handler", self.handler or self.init, "be empty with a program")
        if not isinstance(self.config, list) or not all(isinstance(a, str) for a in self.config):
            raise invalid("config", self.config, "be a list of strings with a program")

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


def close_fds(*fds: int) -> None:
    for fd in fds:
        os.close(fd)


class Forker(Protocol):
    """What a child asks of the fork server that forks it (``fork_server.ForkServer``)."""

    def send_fork(self, request_read: int, result_write: int, output: Any) -> None: ...

    def forked(self) -> Adopted: ...

    def marker_of(self, pid: int) -> str: ...


class Child:
    """A process of the pool's, worker or fork server: its output file, its result pipe,
    how it is stopped. ``_channel`` is the parent's end of the way requests go to it.
    ``pending``: the fork server asked to fork it, whose answer (its pid) is not read yet
    (see ``adopt``)."""

    _count = 0
    pending: Forker | None = None
    _killed: frozenset[int] | None = None  # its descendants, once ``kill`` signalled it
    marker: str
    process: subprocess.Popen[bytes] | Adopted

    def _open(
        self, env: dict[str, str], channel: int, server: Forker | None, launch: Launch | None
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
                    env={**env, **python_env(), MARKER: self.marker},
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
        POOL_PROCESSES.add(self.process.pid)

    @staticmethod
    def _new_marker() -> str:
        Child._count += 1
        return f"{os.getpid()}.{Child._count}"

    def exited(self) -> bool:
        """Dead, but not reaped yet (so that stop() can still find what it left)."""
        return bool(select.select([self.exit_fd], [], [], 0)[0])

    def kill(self) -> bool:
        """Send the process and everything it started SIGKILL, without waiting: many
        stopped at once (``stop_all``) then die side by side, not one after another.
        False if it never was this pool's (a server died before it answered)."""
        try:
            self.adopt()
        except ForkRefused:
            return False
        if self._killed is not None:
            return True  # signalled already (``stop_all``): its descendants are known
        self._killed = frozenset()
        pid = self.process.pid
        # A process that has exited has no descendants left: they came to this process
        # (the subreaper) when it died, and reap_orphans finds them.
        if self.process.returncode is None and not self.exited():
            # Its descendants first, while they are still known by their parent.
            self._killed = frozenset(descendants_of(pid))
            for descendant in self._killed:
                with suppress(ProcessLookupError):
                    os.kill(descendant, signal.SIGKILL)
            with suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
            with suppress(ProcessLookupError):  # a forked worker, before its setsid
                os.kill(pid, signal.SIGKILL)
        return True

    def stop(self) -> str:
        """Kill the process and everything it started, reap them; return the end of what
        the process printed."""
        if not self.kill():
            return ""  # it forked nothing we know of
        pid, killed = self.process.pid, set(self._killed or ())
        # Dead but not reaped: its pid, the session id its descendants are known by, cannot
        # be reused while they are looked for.
        with suppress(ChildProcessError):
            os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
        reap_orphans(killed, session=pid, marker=f"{MARKER}={self.marker}".encode())
        self.process.wait()
        POOL_PROCESSES.discard(pid)
        self._close_channel()
        os.close(self.result_fd)
        os.close(self.exit_fd)
        with self.output:
            fd = self.output.fileno()
            size = os.fstat(fd).st_size
            start = max(0, size - PARSE_LIMIT)
            return os.pread(fd, size - start, start).decode(errors="replace")

    def _close_channel(self) -> None:
        raise NotImplementedError


class Worker(Child):
    """One worker process, the parent's ends of its pipes, and the requests it holds.

    Started as ``launch`` says, or forked by ``server`` (then already started; with
    ``adopt`` false, taken as this worker's later, see ``adopt``)."""

    def __init__(
        self,
        env: dict[str, str],
        launch: Launch | None,
        server: Forker | None = None,
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
            return self.started + START_TIMEOUT
        return self.since + timeout if self.held else float("inf")

    def peak_mb(self) -> int | None:
        """The most address space it has held (VmPeak), None when it cannot be read."""
        try:
            with open(f"/proc/{self.process.pid}/status") as status:
                for line in status:
                    if line.startswith("VmPeak:"):
                        return int(line.split()[1]) >> 10
        except (OSError, ValueError, IndexError):
            return None
        return None

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


class ForkRefused(Exception):
    """The fork server did not fork: ``for_good`` when it never will (it has threads),
    else it died or did not answer."""

    def __init__(self, for_good: bool) -> None:
        super().__init__()
        self.for_good = for_good


class Adopted:
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
class Launch:
    """How a process of the pool is started: ``command``, its three descriptor arguments
    (request fd, result fd, the parent's pid), ``arguments``; then ``start_line`` sent."""

    command: list[str]
    arguments: list[str]
    start_line: bytes

    def argv(self, channel: int, result_write: int) -> list[str]:
        fds = [str(channel), str(result_write), str(os.getpid())]
        return [*self.command, *fds, *self.arguments]


AnyChild = TypeVar("AnyChild", bound=Child)


def stop_all(processes: list[AnyChild]) -> None:
    """Stop each, in order (spares: the order the server answers in), all killed first."""
    for process in processes:
        process.kill()
    while processes:
        processes.pop(0).stop()


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


def worker_env(spec: WorkerSpec) -> dict[str, str]:
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
