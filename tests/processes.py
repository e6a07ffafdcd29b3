"""Processes by pid, for the tests that count what convcheck leaves behind."""

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def running(pid: int) -> bool:
    """Alive: neither gone nor a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):  # gone before, or while, it was read
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def descendants(pid: int) -> set[int]:
    """Every living process under ``pid``."""
    found, pending = set(), [pid]
    while pending:
        parent = pending.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                text = Path(f"/proc/{parent}/task/{task}/children").read_text()
            except OSError:
                continue
            children = {int(child) for child in text.split()} - found
            found |= children
            pending += children
    return {pid for pid in found if running(pid)}


def pids_left_by_a_killed_parent(tmp_path: Path, body: str) -> list[int]:
    """Run ``body`` (Python, with the repository and tests/ on its path) in a process that
    prints the pids it wants watched and then SIGKILLs itself; those pids."""
    script = tmp_path / "parent.py"
    head = f"import os, signal, sys\nsys.path[:0] = [{str(ROOT)!r}, {str(ROOT / 'tests')!r}]\n"
    tail = "\nos.kill(os.getpid(), signal.SIGKILL)\n"
    script.write_text(head + textwrap.dedent(body) + tail)
    zombies = _zombies()
    with subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as parent:
        out, err = parent.communicate()
    assert parent.returncode == -signal.SIGKILL, err
    _reap_watchdog(parent.pid, zombies)
    return [int(pid) for pid in out.split()]


def _reap_watchdog(pid: int, zombies: set[int]) -> None:
    """The killed parent's watchdog, once it has done its work: an orphan that came to
    this process, if a pool made it a subreaper (else init reaps it). Alive, it is known
    by its argument; dead, it is the one new zombie (its command line reads empty)."""
    argument = f"CONVCHECK_SANDBOX_WORKER={pid}.".encode()
    for child in descendants(os.getpid()) | (_zombies() - zombies):
        with contextlib.suppress(OSError):
            command = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
            if not running(child) or argument in command:
                os.waitpid(child, 0)


def _zombies() -> set[int]:
    """This process's children that are zombies (``descendants`` leaves them out)."""
    found = set()
    for task in os.listdir("/proc/self/task"):
        with contextlib.suppress(OSError):
            text = Path(f"/proc/self/task/{task}/children").read_text()
            found |= {int(child) for child in text.split() if not running(int(child))}
    return found


def assert_all_die(pids: list[int]) -> None:
    """Each process dies soon: the kernel's SIGKILL (PR_SET_PDEATHSIG) lands."""
    for pid in pids:
        # Whoever inherits the orphan may not reap it: a zombie counts as dead.
        for _ in range(400):
            if not running(pid):
                break
            time.sleep(0.025)
        else:
            raise AssertionError(f"process {pid} outlived its parent")
    for pid in pids:
        _reap_once_orphaned(pid)


def _reap_once_orphaned(pid: int) -> None:
    """A pool made this process a subreaper: a dead orphan comes here, ours to reap. A
    zombie whose own parent (say, a fork server) is still dying is not ours yet: it comes
    here when that parent is gone, or init reaps it if we are not a subreaper."""
    for _ in range(400):
        try:
            os.waitpid(pid, 0)
            return
        except ChildProcessError:
            if not Path(f"/proc/{pid}").exists():
                return  # reaped by another
        time.sleep(0.025)
    raise AssertionError(f"process {pid} was never reaped")
