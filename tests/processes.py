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
    parent = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert parent.returncode == -signal.SIGKILL, parent.stderr
    return [int(pid) for pid in parent.stdout.split()]


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
        # A pool made this process a subreaper: the orphan came here, and is ours to reap.
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
