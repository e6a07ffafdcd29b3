"""The native judge: convcheck's C kernel, or a user's library with the same ABI, behind
the sandbox.

The library is checked in the parent before any worker starts: its dynamic symbol table
must export the four ABI entries, and a short-lived probe process (with the sanitizer
runtime preloaded when the library needs it) loads it and asks its ABI version. A library
that fails either is a one-line ``ConvcheckError``. The parent never loads the library.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import tempfile
from contextlib import suppress
from dataclasses import asdict
from pathlib import Path
from typing import Any

import convcheck
from convcheck import registry
from convcheck.case import Case
from convcheck.errors import ConvcheckError
from convcheck.native import wire
from convcheck.native._elf import read_dynamic_info
from convcheck.native.build import build_library, build_worker, kernel_of, worker_env
from convcheck.native.limits import RunLimits
from convcheck.outcome import ABI_VIOLATION, TOOL_ERROR, Outcome
from convcheck.pool_judge import PoolJudge
from convcheck.sandbox import Crash, Hang, WorkerPool, WorkerSpec, python_env, run_reaped
from convcheck.targets import Started

_PROBE_TIMEOUT = 60.0  # seconds; loading a library under ASan is quick, but CI is slow
# The answer goes to a private pipe: a library may print from its constructor or
# destructor, or write to whatever fd it believes it owns.
_PROBE = """
import json, os, sys
sys.path.insert(0, sys.argv[3])
from convcheck._worker_main import private_fd
answer_fd = private_fd(int(sys.argv[4]))
from convcheck.errors import ConvcheckError
from convcheck.native.library import load_library
try:
    entries = json.loads(sys.argv[5])
    lib = load_library(sys.argv[1], sys.argv[2], **entries)
    symbol = entries["symbols"][1]
    name = getattr(lib, symbol)()
    if name is None:
        raise ConvcheckError(f"{sys.argv[2]} {sys.argv[1]}: {symbol}() returned NULL")
    answer = {"name": name.decode(errors="replace")}
except ConvcheckError as e:
    answer = {"error": str(e)}
with os.fdopen(answer_fd, "w") as out:
    out.write(json.dumps(answer))
"""


def probe_library(
    path: Path,
    what: str = "target",
    sanitized: bool | None = None,
    kernel: registry.NativeKernel | None = None,
) -> str:
    """Check that ``path`` is a library of ``kernel``'s ABI (by default convolution's)
    without loading it here; its name.

    ``sanitized`` None: read from the library whether it needs the ASan runtime.
    """
    kernel = kernel or kernel_of()
    if not path.is_file():
        said = "is a folder" if path.is_dir() else "not a regular file"
        raise ConvcheckError(f"{what} {path}: {said if path.exists() else 'no such file'}")
    info = read_dynamic_info(path)
    if info is not None:
        for symbol in kernel.entry_points:
            if symbol not in info.defined:
                raise ConvcheckError(
                    f"{what} {path}: missing symbol {symbol} "
                    f"(is it built against {kernel.abi_header}?)"
                )
        if sanitized is None:
            sanitized = info.sanitized
    package_root = str(Path(convcheck.__file__).resolve().parent.parent)
    answer_read, answer_write = os.pipe()
    try:
        with tempfile.TemporaryFile() as printed:
            try:
                status = run_reaped(
                    [sys.executable, "-c", _PROBE, str(path), what, package_root]
                    + [str(answer_write), json.dumps(_entries(kernel))],
                    env={**os.environ, **worker_env(bool(sanitized)), **python_env()},
                    timeout=_PROBE_TIMEOUT,
                    stdin=subprocess.DEVNULL,
                    stdout=printed,
                    stderr=printed,
                    pass_fds=(answer_write,),
                )
            except subprocess.TimeoutExpired:
                raise ConvcheckError(
                    f"{what} {path}: loading it took more than {_PROBE_TIMEOUT:g} s"
                ) from None
            printed.seek(0)
            last_line = (printed.read().decode(errors="replace").strip().splitlines() or [""])[-1]
        os.close(answer_write)
        answer_write = -1
        answer = _read_answer(answer_read)
    finally:
        os.close(answer_read)
        if answer_write >= 0:
            os.close(answer_write)
    if status != 0 or answer is None:
        said = last_line or f"exit status {status}"
        raise ConvcheckError(f"{what} {path}: loading it failed: {said}")
    if "error" in answer:
        raise ConvcheckError(str(answer["error"]))
    return str(answer["name"])


def _entries(kernel: registry.NativeKernel) -> dict[str, Any]:
    """What ``library.load_library`` checks a library of ``kernel``'s ABI by."""
    return {
        "symbols": list(kernel.entry_points),
        "header": kernel.abi_header,
        "version": kernel.abi_version,
    }


def _read_answer(fd: int) -> dict | None:
    """What the probe wrote before it exited; without waiting for an end of file that a
    child the library forked (holding the pipe) might never give."""
    os.set_blocking(fd, False)
    chunks = []
    with suppress(BlockingIOError):
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
    try:
        answer = json.loads(b"".join(chunks))
    except ValueError:
        return None
    return answer if isinstance(answer, dict) else None


def unavailable(revision: str) -> str:
    """The target registry's (``convcheck.targets``): convcheck's kernel builds for every
    revision; a user's library that cannot load says so when it starts."""
    return ""


def start(
    where: str | None, revision: str, jobs: int, timeout: float, op: str = registry.DEFAULT_OP
) -> Started:
    """The target registry's: ``op``'s kernel of ``revision``, or the library of its ABI
    at ``where``."""
    return Started(NativeJudge(revision=revision, target=where, jobs=jobs, timeout=timeout, op=op))


class NativeJudge(PoolJudge):
    """Judges cases with a C library of convcheck's ABI, in sandboxed worker processes.

    ``NativeJudge("legacy")`` builds and uses convcheck's own kernel for that revision
    (sanitized: ASan + UBSan, halting on the first report); ``NativeJudge(target=path)``
    uses a user's library instead (``revision`` and ``sanitized`` are then ignored: whether
    it needs the sanitizer runtime is read from the library). ``check`` runs the argument
    checks only; ``run`` also computes small outputs (see ``RunLimits``), filling
    ``Outcome.values``. A crash or a hang is an outcome, never an exception. ``worker``
    is a module whose ``init`` and ``handle`` serve the requests in the workers; without
    one and with ``c_worker``, the workers are the generic C program (``worker_main.c``,
    fed binary records: a crash costs a fork of a small C process, not of Python), or the
    op's Python worker (``NativeKernel.python_worker``) where that cannot be built.
    ``fork_server``: workers are forked from one that loaded the library (a crash then
    costs a fork, not a start; see ``convcheck.sandbox``); False starts each one, loading
    the library again. ``op``: whose kernel and ABI (``Op.native``).
    """

    def __init__(
        self,
        revision: str = "current",
        target: str | os.PathLike | None = None,
        sanitized: bool = True,
        jobs: int = 1,
        timeout: float = 10.0,
        memory_limit_mb: int | None = 4096,
        limits: RunLimits | None = None,
        worker: str | None = None,
        fork_server: bool = True,
        c_worker: bool = True,
        op: str = registry.DEFAULT_OP,
    ) -> None:
        kernel = kernel_of(op)
        if target is None:
            self.revision: str | None = revision
            self.library = build_library(revision, sanitized, op)
            what = "native library"
        else:
            self.revision = None
            self.library = Path(target).absolute()
            what = "target"
            info = read_dynamic_info(self.library) if self.library.is_file() else None
            sanitized = info.sanitized if info is not None else False
        self.sanitized = sanitized
        self.name = probe_library(self.library, what, sanitized, kernel)
        limits = limits or RunLimits()
        self.program = _c_worker(sanitized, op) if c_worker and worker is None else None
        worker = worker or kernel.python_worker
        if self.program is None and worker is None:
            raise ConvcheckError(f"op {op}: its native kernel needs the C worker, not built here")
        common: dict[str, Any] = {
            # A started C worker symbolizes no better than a forked one: the sandbox names
            # the frames for both (a started one would spend most of its crash on it).
            "env": _worker_env(sanitized, fork_server or self.program is not None),
            "memory_limit_mb": memory_limit_mb,
            "sanitized": sanitized,
            "fork_server": fork_server,
        }
        if self.program is not None:
            # The program brings its own sanitizer runtime (gcc links the one preloaded
            # here, clang its own, which a preloaded one would clash with).
            common["env"] = {k: v for k, v in common["env"].items() if k != "LD_PRELOAD"}
            numbers = (limits.max_tensor_elements, limits.max_out_elements, limits.max_work)
            config: list[str] | dict[str, Any] = [
                str(self.library),
                what,
                *(str(n) for n in numbers),
            ]
            spec = WorkerSpec(program=str(self.program), config=config, **common)
        else:
            config = {
                "library": str(self.library),
                "what": what,
                "limits": asdict(limits),
                "eager": fork_server,
            }
            spec = WorkerSpec(f"{worker}:handle", f"{worker}:init", config, **common)
        self._pool = WorkerPool(spec, jobs=jobs, timeout=timeout)

    def _request(self, case: Case, mode: str) -> dict | bytes:
        if self.program is None:
            return super()._request(case, mode)
        return wire.encode(case, mode == "run")

    @staticmethod
    def outcome(answer: bytes | dict | Crash | Hang) -> Outcome:
        return _outcome(answer)

    def __repr__(self) -> str:
        return f"NativeJudge({self.name!r}, library={str(self.library)!r})"


def _worker_env(sanitized: bool, fork_server: bool) -> dict[str, str]:
    # One BLAS thread: numpy then starts none, and the fork server may fork.
    env = {**worker_env(sanitized), "OPENBLAS_NUM_THREADS": "1"}
    if fork_server and os.path.basename(env.get("LD_PRELOAD", "")).startswith("libasan"):
        # gcc's UBSan has a symbolizer of its own, which a fork server cannot warm: each
        # worker would spend a quarter of a second of its crash on reading debug
        # information. ASan's, warmed, still reads the debug information of each unit
        # its stacks pass through, in every worker: a third of a crash. The sandbox names
        # the frames instead, once per address.
        env["UBSAN_OPTIONS"] += ":symbolize=0"
        # The harness's blocks come from ctypes through libffi, which the fast unwinder
        # cannot walk: an allocation stack goes on past malloc and libffi into garbage,
        # and a garbage frame sends ASan back to /proc/self/maps for its modules, twice
        # per report (a quarter of a crash). malloc and the allocating function stay.
        env["ASAN_OPTIONS"] += ":symbolize=0:malloc_context_size=2"
    return env


def _c_worker(sanitized: bool, op: str) -> Path | None:
    """``op``'s C worker program, or None where it cannot be built (no C compiler, say: a
    user's target needs none)."""
    try:
        return build_worker(sanitized, op)
    except ConvcheckError:
        return None


def _outcome(answer: bytes | dict | Crash | Hang) -> Outcome:
    if isinstance(answer, bytes):
        try:
            return wire.decode(answer)
        except (IndexError, ValueError, struct.error) as exc:  # memory the target scribbled on
            return Outcome.tool_error(detail=f"a malformed answer from the C worker: {exc}")
    if isinstance(answer, Crash):
        return Outcome.crashed(answer.kind, answer.site, detail=_first_report_line(answer))
    if isinstance(answer, Hang):
        return Outcome.hung(detail=answer.describe())
    verdict = answer["verdict"]
    if verdict == "accept":
        values = answer.get("values")
        return Outcome.accept(answer["out_sizes"], None if values is None else tuple(values))
    if verdict == ABI_VIOLATION:
        return Outcome.abi_violation(answer["check"], detail=answer["detail"])
    if verdict == TOOL_ERROR:
        return Outcome.tool_error(detail=answer["detail"])
    return Outcome.reject(answer["check"])


def _first_report_line(crash: Crash) -> str:
    for line in crash.report.splitlines():
        if "runtime error:" in line or "ERROR:" in line:
            return line.strip()
    return crash.describe()
