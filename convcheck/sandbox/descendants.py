"""Every process a worker starts is reaped with it: the parent is a child subreaper, a
worker dies with its parent, and a target's orphans are found by their session or by a
marker in their environment, killed and reaped; a watchdog kills what carries the marker
when the parent dies of a SIGKILL, which gives it no time to."""

from __future__ import annotations

import atexit
import ctypes
import functools
import itertools
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

# In every worker's environment, inherited by what it starts: tells its descendants apart
# from the parent's other children once they are orphans.
MARKER = "CONVCHECK_SANDBOX_WORKER"


_PR_SET_PDEATHSIG = 1


_PR_SET_CHILD_SUBREAPER = 36


def _libc_prctl() -> Callable[..., int]:
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    prctl.restype = ctypes.c_int
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    return prctl


_prctl = _libc_prctl()  # resolved here: _die_with_parent runs between fork and exec

# personality(2)'s flag that turns address-space layout randomisation off for a program
# this process execs: see ``_die_with_parent``.
_ADDR_NO_RANDOMIZE = 0x0040000
_personality = ctypes.CDLL(None, use_errno=True).personality
_personality.restype = ctypes.c_int
_personality.argtypes = [ctypes.c_ulong]


# The workers and fork servers of every pool of this process, until reaped: never orphans.
POOL_PROCESSES: set[int] = set()


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


_subreaper_pid: int | None = None


def become_subreaper() -> None:
    """Orphaned descendants of this process become its children, not init's; and the
    watchdog kills them if this process dies too suddenly to."""
    global _subreaper_pid
    if _subreaper_pid != os.getpid():
        _prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        _subreaper_pid = os.getpid()
        _start_watchdog()


# The watchdog: it waits for the end of its standard input, a pipe whose only writer is
# the parent (the write end is close-on-exec: no worker or target holds it), so the end
# comes when the parent dies, however it dies. Then it kills every process whose
# environment holds one of the parent's markers (``<MARKER>=<parent's pid>.``), until none
# is left (a round of SIGKILLs leaves zombies, whose environment reads empty).
_WATCHDOG = """
import os, signal, sys, time
sys.stdin.buffer.read()
entry = sys.argv[1].encode()
for _ in range(200):
    found = []
    for name in os.listdir("/proc"):
        try:
            with open("/proc/" + name + "/environ", "rb") as environ:
                if any(e.startswith(entry) for e in environ.read().split(b"\\0")):
                    found.append(int(name))
        except (OSError, ValueError):
            pass
    if not found:
        break
    for pid in found:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    time.sleep(0.05)
"""

_watchdog: subprocess.Popen[bytes] | None = None
_watchdog_pipe: int | None = None  # its write end, held open for this process's life


def _watchdog_argument(pid: int) -> str:
    """The watchdog of process ``pid`` kills what carries this entry in its environment:
    its one argument, by which it is known too."""
    return f"{MARKER}={pid}."


def _start_watchdog() -> None:
    global _watchdog, _watchdog_pipe
    read, write = os.pipe()  # both close-on-exec (not inheritable)
    # Not the parent's marker: a watchdog of the parent's parent must not kill it first.
    env = {name: value for name, value in os.environ.items() if name != MARKER}
    try:
        _watchdog = subprocess.Popen(
            [sys.executable, "-c", _WATCHDOG, _watchdog_argument(os.getpid())],
            stdin=read,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**env, **python_env()},
            start_new_session=True,  # a Ctrl-C meant for the parent leaves it waiting
        )
    except OSError:
        os.close(write)  # no watchdog: a SIGKILL of the parent leaves orphans, as before
    else:
        if _watchdog_pipe is not None:
            os.close(_watchdog_pipe)  # a forked copy's parent's: not this process's
        _watchdog_pipe = write
        atexit.register(stop_watchdog)
    finally:
        os.close(read)


def stop_watchdog() -> None:
    """At a normal exit, the watchdog's last look (what a pool missed, it kills), waited
    for: it is not left running, nor an orphan for a subreaper above to reap. (A process
    that leaves by ``os._exit`` calls it first: atexit does not run.)"""
    global _watchdog_pipe
    if _watchdog is None or _watchdog_pipe is None or _subreaper_pid != os.getpid():
        return
    os.close(_watchdog_pipe)
    _watchdog_pipe = None
    with suppress(subprocess.TimeoutExpired):
        _watchdog.wait(timeout=15.0)  # its rounds end within 10 s


@functools.cache  # registered once
def reap_resource_tracker_at_exit() -> None:
    """For a process about to start a spawn-context pool: the pool starts
    multiprocessing's resource tracker, which outlives it and ends when this process
    does, an orphan then for whoever reaps orphans (a subreaper above, a CI runner say).
    At exit it is stopped, and reaped, here."""
    from multiprocessing import resource_tracker

    stop = getattr(resource_tracker._resource_tracker, "_stop", None)
    if stop is not None:  # CPython's, 3.8 and later
        atexit.register(stop)


def own_session() -> dict[str, Any]:
    """``subprocess.Popen`` arguments for a child in a session of its own (Ctrl-C at the
    terminal is this process's to handle) that is SIGKILLed when this process dies
    (PR_SET_PDEATHSIG; start it from a thread that lives as long as the child)."""
    return {"start_new_session": True, "preexec_fn": _die_with_parent(os.getpid())}


_runs = itertools.count(1)


def run_reaped(argv: list[str], env: dict[str, str], timeout: float, **popen: Any) -> int:
    """``subprocess.run`` for a short-lived child that loads a target (a probe), reaped as
    a tree as a worker is: what the target's constructor forked, in the child's session
    or (after a setsid) carrying its marker, is killed and reaped when the child ends.
    Its exit status; ``subprocess.TimeoutExpired`` past ``timeout``, the child killed."""
    become_subreaper()
    marker = f"{os.getpid()}.run.{next(_runs)}"
    env = {**env, MARKER: marker}
    with subprocess.Popen(argv, env=env, start_new_session=True, **popen) as child:
        try:
            return child.wait(timeout)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
            reap_orphans(set(), session=child.pid, marker=f"{MARKER}={marker}".encode())


def _die_with_parent(parent: int) -> Callable[[], None]:
    def preexec() -> None:  # between fork and exec: system calls only
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        # The same address layout in every run: a Python child walks a set of objects
        # in the order of their addresses (the atheris child's model does, and its
        # comparisons steer libFuzzer), and whether a sanitizer sees a wild read depends
        # on where the mappings lie. Refused (a seccomp profile), the layout is random.
        _personality(_ADDR_NO_RANDOMIZE)
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


def descendants_of(pid: int) -> set[int]:
    found: set[int] = set()
    pending = [pid]
    while pending:
        for child in _children(pending.pop()) - found:
            found.add(child)
            pending.append(child)
    return found


def _started_by_worker(pid: int, session: int, marker: bytes) -> bool:
    """In the worker's session, or (after a setsid) still carrying its marker, or the
    watchdog of a worker that had pools of its own (a shard), which ran apart in a
    session of its own and knows the worker by its pid (the worker's session)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            if int(stat.read().rpartition(")")[2].split()[3]) == session:
                return True
        with open(f"/proc/{pid}/environ", "rb") as environ:
            if marker in environ.read().split(b"\0"):
                return True
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return _watchdog_argument(session).encode() in cmdline.read().split(b"\0")
    except (OSError, IndexError, ValueError):
        return False


def reap_orphans(killed: set[int], session: int, marker: bytes) -> None:
    """Kill and reap what a dead worker left behind: its descendants come to this process
    (the subreaper) as their parents die, one generation at a time."""
    while True:
        pending = {
            child
            # Not the worker (its Popen reaps it), nor the pools' other processes.
            for child in _children(os.getpid()) - {session} - POOL_PROCESSES
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
