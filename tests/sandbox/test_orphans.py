"""Nothing convcheck starts outlives it: counted by pid, before and after a SIGKILL.

(A pool makes its process a child subreaper, so orphans of what a test starts come back
to the test process; the tests reap them, as the pool does its own.)
"""

import contextlib
import importlib.util
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest
from processes import running

import convcheck
from convcheck.sandbox import private_temporary_directory
from convcheck.sandbox.descendants import descendants_of

ROOT = str(Path(convcheck.__file__).resolve().parents[1])


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _wait_until(condition, what: str, tries: int = 2400) -> None:
    """Polls, for at most two minutes: a bound for a stuck test, not a speed check."""
    for _ in range(tries):
        if condition():
            return
        time.sleep(0.05)
    pytest.fail(f"never happened: {what}")


def _all_gone(pids: set[int]) -> None:
    _wait_until(lambda: not any(running(pid) for pid in pids), f"{sorted(pids)} all dead")
    for pid in pids:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)


def test_own_session_child_dies_with_its_parent(tmp_path):
    script = tmp_path / "parent.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import os, signal, subprocess, sys
            sys.path.insert(0, {ROOT!r})
            from convcheck.sandbox import own_session
            child = subprocess.Popen(["sleep", "600"], **own_session())
            print(child.pid, flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
            """
        )
    )
    parent = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert parent.returncode == -signal.SIGKILL, parent.stderr
    _all_gone({int(parent.stdout)})


def test_temporary_folders_of_dead_owners_are_swept(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    gone = subprocess.Popen(["true"])
    gone.wait()
    prefix = "convcheck-test-"
    dead = tmp_path / f"{prefix}{gone.pid}-left"
    alive = tmp_path / f"{prefix}{os.getppid()}-in-use"
    other = tmp_path / f"{prefix}not-a-pid"
    for folder in (dead, alive, other):
        folder.mkdir()
        (folder / "file").write_text("x")
    with private_temporary_directory(prefix) as mine:
        assert mine.name.startswith(f"{prefix}{os.getpid()}-")
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
            [alive.name, other.name, mine.name]
        )
    assert not mine.exists()


@pytest.mark.skipif(importlib.util.find_spec("atheris") is None, reason="atheris not installed")
def test_the_atheris_child_and_its_workers_die_with_the_campaign(tmp_path):
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONPATH": ROOT}
    command = [sys.executable, "-m", "convcheck", "fuzz", "--engine", "atheris"]
    command += ["--revision", "current", "--no-torch", "--no-minimize", "--cases", "1000000000"]
    command += ["--corpus", str(tmp_path / "corpus")]
    campaign = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        # The tree as it stood when the workers were seen: read again, a worker could be
        # between a restart and its replacement.
        tree: set[int] = set()

        def fuzzing() -> bool:
            now = descendants_of(campaign.pid)
            libfuzzer = [pid for pid in now if "convcheck.engines._atheris_child" in _cmdline(pid)]
            workers = descendants_of(libfuzzer[0]) if libfuzzer else set()
            if workers:
                tree.update(now | workers)
            return bool(workers)

        _wait_until(fuzzing, "libFuzzer running with its workers")
    finally:
        campaign.kill()
        campaign.wait()
    assert len(tree) >= 2  # libFuzzer and its worker at least
    _all_gone(tree)
    left = list(tmp_path.glob("convcheck-atheris-*"))
    assert len(left) == 1  # a SIGKILL leaves its folder: the next one sweeps it
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    try:
        with private_temporary_directory("convcheck-atheris-") as folder:
            assert list(tmp_path.glob("convcheck-atheris-*")) == [folder]
    finally:
        monkeypatch.undo()
    assert list(tmp_path.glob("convcheck-atheris-*")) == []
