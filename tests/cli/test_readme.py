"""The README's replay commands, run exactly as written (read from README.md, so that the
test follows the README), in a fresh copy of the repository's tracked files: each must
exit 0 on the shipped corpus, the kernel's entries passing and torch's own bugs reported
apart, never failing the kernel."""

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]


def replay_commands() -> list[str]:
    """The ``convcheck replay`` lines of the README's command blocks, comments included."""
    text = (ROOT / "README.md").read_text()
    return [
        line.strip()
        for line in text.splitlines()
        if line.startswith("    ") and line.strip().startswith("convcheck replay ")
    ]


@pytest.fixture(scope="module")
def fresh_clone(tmp_path_factory) -> Path:
    """The tracked files as they are now: what a clone would hold, without whatever a local
    campaign added to corpus/."""
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=False
    )
    if listed.returncode != 0:
        pytest.skip("not a git checkout: there is no fresh clone to copy")
    copy = tmp_path_factory.mktemp("clone")
    for name in listed.stdout.decode().split("\0"):
        if name and (ROOT / name).is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ROOT / name, copy / name)
    return copy


def test_the_readme_has_the_replay_commands():
    commands = replay_commands()
    assert any("--revision current" in c for c in commands), commands
    assert any("--expect-reproduce" in c for c in commands), commands


def shipped_entries(clone: Path) -> tuple[int, int]:
    kernel = list((clone / "corpus").glob("*.json"))
    torch = list((clone / "corpus" / "torch").glob("*.json"))
    assert all(json.loads(p.read_text())["kind"] == "torch-bug" for p in torch)
    assert not any(json.loads(p.read_text())["kind"] == "torch-bug" for p in kernel)
    return len(kernel), len(torch)


@pytest.mark.slow
@pytest.mark.parametrize("command", replay_commands())
def test_a_readme_replay_command_exits_0_on_the_shipped_corpus(command, fresh_clone):
    kernel, torch = shipped_entries(fresh_clone)
    assert kernel and torch
    # The command as written, by a shell, with this environment's convcheck first on PATH.
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    done = subprocess.run(
        command, shell=True, cwd=fresh_clone, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, (shlex.split(command, comments=True), done.stdout, done.stderr)
    summary = done.stdout.strip().splitlines()[-1]
    assert summary.startswith(f"{kernel + torch} entries, {kernel} passed, 0 failed; {torch} "), (
        summary
    )
