"""Worker processes that may die: where native code and torch run.

A ``WorkerPool`` hands batches of JSON requests to worker processes and returns one
result per request, in order: the handler's dict, a ``Crash`` (the process died, or the
handler raised) or a ``Hang`` (no result within the timeout). A worker that crashes or
hangs is killed and replaced, and the batch carries on with the next request.

The worker's side, and the protocol between the two, is ``convcheck/_worker_main.py``.
"""

from __future__ import annotations

import json
import os
import queue
import re
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from convcheck.errors import ConvcheckError
from convcheck.validation import check_positive_int, check_seconds

__all__ = ["Crash", "Hang", "WorkerPool", "WorkerSpec"]

_WORKER_MAIN = str(Path(__file__).with_name("_worker_main.py"))
_REPORT_LIMIT = 8192  # characters of a crash's output kept in Crash.report
_PARSE_LIMIT = 65536  # bytes of a crash's output searched for a sanitizer report
_START_TIMEOUT = 120.0  # seconds; importing torch under ASan takes a while
# Most requests sent ahead to one worker, so that it never waits for the parent. Fewer
# when the batch is small: each worker gets its share (slow requests run in parallel).
_WINDOW = 64
# gcc 12's ASan, preloaded into Python, does not start the thread that enforces
# hard_rss_limit_mb (a binary linked with ASan does), so the parent watches a sanitized
# worker's RSS itself, this often (seconds).
_RSS_INTERVAL = 0.1
_NAME = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*")


@dataclass(frozen=True)
class WorkerSpec:
    """What a worker process runs: ``init(config)`` once, then ``handler(request) -> dict``.

    ``handler`` and ``init`` are ``"module:function"`` names, imported in the worker with
    the parent's ``sys.path``. ``env`` is added to the worker's environment only.
    ``memory_limit_mb`` (None for no limit) caps the worker's address space; when
    ``sanitized`` (the worker loads an ASan library, which reserves terabytes of address
    space for its shadow) it adds ASan's RSS and allocation limits to ASAN_OPTIONS
    instead, and the pool kills a worker whose RSS goes over it during a request.
    """

    handler: str
    init: str | None = None
    config: Any = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    memory_limit_mb: int | None = 4096
    sanitized: bool = False

    def __post_init__(self) -> None:
        if not (isinstance(self.handler, str) and _NAME.fullmatch(self.handler)):
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

    def describe(self) -> str:
        parts = [self.handler]
        if self.init is not None:
            parts.append(f"init {self.init}")
        if self.memory_limit_mb is not None:
            parts.append(f"{self.memory_limit_mb} MB")
        if self.sanitized:
            parts.append("sanitized")
        return ", ".join(parts)


@dataclass(frozen=True)
class Crash:
    """A request that killed its worker, or that made the handler raise.

    ``kind`` comes from a sanitizer report when there is one ("heap-buffer-overflow READ",
    "signed-integer-overflow", "SEGV null", "out-of-memory"), else from the signal
    ("SIGSEGV"), else "exit"; a handler's exception is "python-exception". ``site`` says
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
        # weakref.finalize also registers itself with atexit.
        weakref.finalize(self, _stop_all, self._workers)

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Kill and reap every worker; a later ``run`` starts new ones."""
        _stop_all(self._workers)

    def run(self, requests: Sequence[dict[str, Any]]) -> list[dict[str, Any] | Crash | Hang]:
        """One result per request, in order: the handler's dict, a Crash or a Hang."""
        lines = [_encode(index, request) for index, request in enumerate(requests)]
        try:
            return _Batch(self, lines).run()
        except BaseException:
            # Ctrl-C, a worker that cannot start: no worker is left holding requests.
            self.close()
            raise

    def _start_worker(self) -> _Worker:
        start = {
            "path": sys.path,
            "handler": self.spec.handler,
            "init": self.spec.init,
            "config": self.spec.config,
            "memory_limit_mb": None if self.spec.sanitized else self.spec.memory_limit_mb,
            "faulthandler": not self.spec.sanitized,
        }
        return _Worker(self._env, (json.dumps(start) + "\n").encode())


class _Batch:
    """One ``run``: hands the requests to the pool's workers and collects the results."""

    def __init__(self, pool: WorkerPool, lines: list[bytes]) -> None:
        self.pool = pool
        self.workers = pool._workers
        self.lines = lines
        self.results: list[Any] = [None] * len(lines)
        self.unsent = deque(range(len(lines)))
        self.left = len(lines)
        self.rss_limit_mb = pool.spec.memory_limit_mb if pool.spec.sanitized else None
        self.rss_check_at = 0.0

    def run(self) -> list[dict[str, Any] | Crash | Hang]:
        for worker in [w for w in self.workers if w.process.poll() is not None]:
            # Died while idle: no request to blame, so just replace it.
            worker.stop()
            self.workers.remove(worker)
        while len(self.workers) < min(self.pool.jobs, self.left):
            self.workers.append(self.pool._start_worker())
        while self.left:
            self._feed()
            self._wait()
        return self.results

    def _feed(self) -> None:
        now = time.monotonic()
        outstanding = len(self.unsent) + sum(len(worker.held) for worker in self.workers)
        window = min(_WINDOW, -(-outstanding // len(self.workers)))
        for worker in self.workers:
            while worker.ready and self.unsent and len(worker.held) < window:
                index = self.unsent.popleft()
                if not worker.held:
                    worker.since = now
                worker.held.append(index)
                worker.outgoing += self.lines[index]
            if worker.outgoing:
                worker.flush()

    def _wait(self) -> None:
        poller = select.poll()
        owners: dict[int, _Worker] = {}
        for worker in self.workers:
            poller.register(worker.result_fd, select.POLLIN)
            owners[worker.result_fd] = worker
            if worker.outgoing:
                poller.register(worker.request_fd, select.POLLOUT)
                owners[worker.request_fd] = worker
        deadline = min(worker.deadline(self.pool.timeout) for worker in self.workers)
        if self.rss_limit_mb is not None:
            deadline = min(deadline, self.rss_check_at)
        assert deadline < float("inf"), "requests left, but no worker holds or awaits any"
        for fd, _ in poller.poll(max(0.0, deadline - time.monotonic()) * 1000 + 1):
            worker = owners[fd]
            if worker not in self.workers:
                continue  # replaced earlier in this loop; the fd number may be reused
            if fd == worker.result_fd:
                self._receive(worker)
            else:
                worker.flush()
        now = time.monotonic()
        if self.rss_limit_mb is not None and now >= self.rss_check_at:
            self._check_rss(self.rss_limit_mb)
            self.rss_check_at = now + _RSS_INTERVAL
        for worker in list(self.workers):
            if worker.deadline(self.pool.timeout) > now:
                continue
            if not worker.ready:
                raise self._start_failed(worker, f"not ready within {_START_TIMEOUT:g} s")
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

    def _receive(self, worker: _Worker) -> None:
        data = os.read(worker.result_fd, 1 << 16)
        if not data:
            if not worker.ready:
                raise self._start_failed(worker)
            output = worker.stop()
            self._replace(worker, _crash(worker.process.returncode, output))
            return
        *lines, worker.partial = (worker.partial + data).split(b"\n")
        for line in lines:
            if worker.ready:
                self.results[worker.held.popleft()] = _decode(line)
                self.left -= 1
            elif line == b"S":
                worker.ready = True
            else:
                raise self._start_failed(worker, line[1:].decode(errors="replace"))
        worker.since = time.monotonic()

    def _start_failed(self, worker: _Worker, reason: str | None = None) -> ConvcheckError:
        """Stop a worker that never got ready; the error says why (else how it died)."""
        output = worker.stop()
        self.workers.remove(worker)
        if reason is None:
            crash = _crash(worker.process.returncode, output)
            last = output.strip().splitlines()[-1:]
            reason = crash.describe()
            if crash.kind == "exit" and last:
                reason += f": {last[0]}"
        return ConvcheckError(f"worker for {self.pool.spec.describe()} failed to start: {reason}")

    def _replace(self, worker: _Worker, outcome: Crash | Hang) -> None:
        """Give the stopped worker's oldest request its outcome, and its others back."""
        self.results[worker.held.popleft()] = outcome
        self.left -= 1
        self.unsent.extendleft(reversed(worker.held))
        position = self.workers.index(worker)
        if self.unsent:
            self.workers[position] = self.pool._start_worker()
        else:
            del self.workers[position]


class _Worker:
    """One worker process, the parent's ends of its pipes, and the requests it holds."""

    def __init__(self, env: dict[str, str], start_line: bytes) -> None:
        # The worker's stdout and stderr: emptied by the worker before each request.
        self.output = tempfile.TemporaryFile()
        request_read, self.request_fd = os.pipe()
        self.result_fd, result_write = os.pipe()
        try:
            self.process = _SPAWNER.popen(
                [sys.executable, "-u", _WORKER_MAIN]
                + [str(request_read), str(result_write), str(os.getpid())],
                stdin=subprocess.DEVNULL,
                stdout=self.output,
                stderr=self.output,
                pass_fds=(request_read, result_write),
                env=env,
                start_new_session=True,  # Ctrl-C at the terminal is the parent's to handle
            )
        except BaseException:
            os.close(self.request_fd)
            os.close(self.result_fd)
            self.output.close()
            raise
        finally:
            os.close(request_read)
            os.close(result_write)
        os.set_blocking(self.request_fd, False)
        self.started = time.monotonic()
        self.ready = False
        self.held: deque[int] = deque()  # indices of the requests sent, oldest first
        self.since = 0.0  # when the oldest held request started waiting for its result
        self.outgoing = bytearray(start_line)
        self.partial = b""

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

    def stop(self) -> str:
        """Kill the worker's process group, reap it; return the end of what it printed."""
        if self.process.returncode is None:
            with suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        os.close(self.request_fd)
        os.close(self.result_fd)
        with self.output:
            fd = self.output.fileno()
            size = os.fstat(fd).st_size
            start = max(0, size - _PARSE_LIMIT)
            return os.pread(fd, size - start, start).decode(errors="replace")


def _stop_all(workers: list[_Worker]) -> None:
    while workers:
        workers.pop().stop()


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
        limits = (
            f"hard_rss_limit_mb={limit}:allocator_may_return_null=0:max_allocation_size_mb={limit}"
        )
        given = env.get("ASAN_OPTIONS")
        env["ASAN_OPTIONS"] = f"{given}:{limits}" if given else limits
    return env


def _encode(index: int, request: dict[str, Any]) -> bytes:
    if not isinstance(request, dict):
        raise ConvcheckError(f"request {index} is a {type(request).__name__}, not a dict")
    try:
        return (json.dumps(request) + "\n").encode()
    except (TypeError, ValueError) as exc:
        raise ConvcheckError(f"request {index} is not JSON-able: {exc}") from None


def _decode(line: bytes) -> dict[str, Any] | Crash:
    tag, body = line[:1], line[1:]
    if tag == b"R":
        return json.loads(body)
    assert tag == b"E", line
    failure = json.loads(body)
    return Crash("python-exception", failure["site"], None, None, failure["report"])


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _crash(returncode: int, output: str) -> Crash:
    """The Crash for a worker that died with ``returncode`` after printing ``output``."""
    signal_name = _signal_name(-returncode) if returncode < 0 else None
    exit_status = returncode if returncode >= 0 else None
    found = _classify(output)
    if found is None:
        kind, site = signal_name or "exit", _python_fault_site(output)
    else:
        kind, site = found
    return Crash(kind, site, signal_name, exit_status, output[-_REPORT_LIMIT:])


# -- sanitizer reports ------------------------------------------------------------------

_UBSAN_ERROR = re.compile(r"^(?P<where>.*?): runtime error: (?P<message>.*)$", re.M)
_SANITIZER_ERROR = re.compile(r"ERROR: (?P<tool>\w+)Sanitizer: (?P<message>.*)$", re.M)
# Dying of its RSS limit, ASan prints no "ERROR:" line.
_RSS_EXHAUSTED = re.compile(r"Sanitizer: hard rss limit exhausted.*$", re.M)
_FRAME_LINE = re.compile(r"\s*#\d+ 0x")
_FRAME = re.compile(
    r"\s*#\d+ 0x[0-9a-fA-F]+\s+(?:in (?P<function>.+?)\s+)?"
    r"(?:(?P<file>[^\s()]+?):(?P<line>\d+)(?::\d+)?|\([^)]*\))"
    r"(?: \(BuildId: [0-9a-fA-F]+\))?\s*"
)
# Frames of the sanitizer runtime and libc (interceptors, malloc): never the site.
_RUNTIME_FRAME = re.compile(
    r"__interceptor_|__asan_|__ubsan_|__sanitizer_|__lsan_|libsanitizer|sanitizer_common"
    r"|compiler-rt|/sysdeps/|lib(?:asan|ubsan|lsan|c)\.so"
)
_LOCATION = re.compile(r"(?P<file>.+?):(?P<line>\d+)(?::\d+)?")
_UBSAN_KINDS = [
    (re.compile(pattern), kind)
    for pattern, kind in (
        (r"^signed integer overflow", "signed-integer-overflow"),
        (r"^negation of .* cannot be represented", "signed-integer-overflow"),
        (r"^division of .* by -1 cannot be represented", "signed-integer-overflow"),
        (r"^unsigned integer overflow", "unsigned-integer-overflow"),
        (r"division by zero", "division-by-zero"),
        (r"^shift exponent", "shift-exponent"),
        (r"^left shift of", "shift-base"),
        (r"^applying (?:non-)?zero offset|^pointer index expression", "pointer-overflow"),
        (r"^(?:addition|subtraction) of unsigned offset", "pointer-overflow"),
        (r"null pointer of type", "null-pointer-use"),
        (r"misaligned address", "misaligned-pointer-use"),
        (r"out of bounds for type", "out-of-bounds-index"),
        (r"is outside the range of representable values", "float-cast-overflow"),
        (r"^load of value .*, which is not a valid value", "invalid-value-load"),
        (r"^variable length array bound", "vla-bound"),
        (r"unreachable program point", "unreachable"),
        (r"end of a value-returning function", "missing-return"),
        (r"^null pointer passed as argument", "nonnull-argument"),
        (r"^null pointer returned from function", "returns-nonnull"),
        (r"^passing zero to", "invalid-builtin-use"),
        (r"insufficient space for an object", "object-size"),
        (r"^implicit conversion", "implicit-conversion"),
    )
]
_DEADLY_SIGNAL = re.compile(r"(SEGV|BUS|FPE|ILL) on unknown address(?: (0x[0-9a-fA-F]+))?")
_OUT_OF_MEMORY = re.compile(
    r"out of memory|requested allocation size|exceeds maximum supported size"
    r"|allocator exceeded the RSS limit|RSS limit exceeded"
)
_ASAN_PHRASES = (
    ("attempting double-free", "double-free"),
    ("attempting free on address which was not malloc()-ed", "bad-free"),
    ("calloc parameters overflow", "calloc-overflow"),
    ("reallocarray parameters overflow", "reallocarray-overflow"),
    ("pvalloc parameters overflow", "pvalloc-overflow"),
    ("invalid alignment requested", "invalid-allocation-alignment"),
    ("detected memory leaks", "memory-leak"),
)
_HYPHENATED = re.compile(r"[a-z]+(?:-[a-z]+)+")
_ACCESS = re.compile(r"(READ|WRITE) of size")
_TOOLS = {"Address": "asan", "UndefinedBehavior": "ubsan", "Leak": "lsan"}
_PYTHON_FRAME = re.compile(
    r'^  File "(?P<file>[^"]+)", line (?P<line>\d+) in (?P<function>\S+)', re.M
)


def _classify(output: str) -> tuple[str, str] | None:
    """``(kind, site)`` of the first sanitizer report in ``output``, or None."""
    found = [
        match
        for match in (
            _UBSAN_ERROR.search(output),
            _SANITIZER_ERROR.search(output),
            _RSS_EXHAUSTED.search(output),
        )
        if match
    ]
    if not found:
        return None
    first = min(found, key=lambda match: match.start())
    following = output[first.end() :].split("\n")[1:]
    if first.re is _UBSAN_ERROR:
        # UBSan prints its stack right under the message, if at all.
        frames = _stack(following, skip=0)
        return _ubsan_kind(first["message"]), _ubsan_site(first["where"], frames)
    # ASan prints a few lines ("READ of size 4 ...", hints) before its stack.
    frames = _stack(following, skip=4)
    if first.re is _RSS_EXHAUSTED:
        return "out-of-memory", _site(frames)
    return _sanitizer_kind(first["tool"], first["message"], following[:3]), _site(frames)


def _stack(lines: list[str], skip: int) -> list[re.Match | None]:
    """The parsed frames of the stack trace that starts after at most ``skip`` lines."""
    frames: list[re.Match | None] = []
    for number, line in enumerate(lines):
        if _FRAME_LINE.match(line):
            frames.append(_FRAME.fullmatch(line))
        elif frames or number >= skip:
            break
    return frames


def _ubsan_kind(message: str) -> str:
    for pattern, kind in _UBSAN_KINDS:
        if pattern.search(message):
            return kind
    return "ubsan"


def _ubsan_site(where: str, frames: list[re.Match | None]) -> str:
    location = _LOCATION.fullmatch(where)
    parts = []
    if frames and frames[0] and frames[0]["function"]:
        parts.append(frames[0]["function"])
    if location:
        parts.append(f"{os.path.basename(location['file'])}:{location['line']}")
    return " ".join(parts)


def _sanitizer_kind(tool: str, message: str, following: list[str]) -> str:
    deadly = _DEADLY_SIGNAL.match(message)
    if deadly:
        name, address = deadly.groups()
        # The zero page: a null pointer, or a small offset from one.
        if name == "SEGV" and address is not None and int(address, 16) < 4096:
            return "SEGV null"
        return name
    if _OUT_OF_MEMORY.search(message):
        return "out-of-memory"
    for phrase, kind in _ASAN_PHRASES:
        if message.startswith(phrase):
            return kind
    named = _HYPHENATED.match(message)
    if named is None:
        return _TOOLS.get(tool, tool.lower())
    access = next((m for m in map(_ACCESS.match, following) if m), None)
    return f"{named[0]} {access[1]}" if access else named[0]


def _site(frames: list[re.Match | None]) -> str:
    """The first frame of the program's own code: "function file.c:line", or "function"."""
    fallback = ""
    for frame in frames:
        if frame is None or not frame["function"] or _RUNTIME_FRAME.search(frame[0]):
            continue
        if frame["file"]:
            return f"{frame['function']} {os.path.basename(frame['file'])}:{frame['line']}"
        fallback = fallback or frame["function"]
    return fallback


def _python_fault_site(output: str) -> str:
    """Innermost Python frame of a faulthandler traceback ("function file.py:line"), or ""."""
    frame = _PYTHON_FRAME.search(output)
    if frame is None:
        return ""
    return f"{frame['function']} {os.path.basename(frame['file'])}:{frame['line']}"
