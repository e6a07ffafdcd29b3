"""build_library compiles once per sources, flags and compiler, and says why it cannot."""

import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest

from convcheck.errors import ConvcheckError
from convcheck.model import REVISIONS
from convcheck.native import build


@pytest.fixture
def compiles(tmp_path, monkeypatch):
    """A fresh cache; the compiler invocations made, as argument lists."""
    monkeypatch.setenv("CONVCHECK_CACHE", str(tmp_path / "cache"))
    calls = []
    real_run = subprocess.run

    def recording_run(command, *args, **kwargs):
        if "-shared" in command:
            calls.append(command)
        return real_run(command, *args, **kwargs)

    monkeypatch.setattr(build.subprocess, "run", recording_run)
    return calls


def test_second_build_is_the_cached_library(compiles, tmp_path):
    first = build.build_library("current", sanitized=False)
    assert len(compiles) == 1
    assert first.parent == tmp_path / "cache"
    assert first.name.startswith("libconvcheck-current-plain-")
    modified = first.stat().st_mtime_ns
    second = build.build_library("current", sanitized=False)
    assert second == first
    assert len(compiles) == 1
    assert first.stat().st_mtime_ns == modified


def test_flavours_and_revisions_are_apart(compiles):
    paths = {build.build_library(r, sanitized=s) for r in REVISIONS for s in (True, False)}
    assert len(paths) == 4
    assert len(compiles) == 4
    sanitized = [c for c in compiles if "-fsanitize=address,undefined" in c]
    assert len(sanitized) == 2
    for command in sanitized:
        assert "-fno-sanitize-recover=all" in command


def test_concurrent_builds_agree(compiles):
    with ThreadPoolExecutor(4) as pool:
        paths = list(pool.map(lambda _: build.build_library("legacy", False), range(4)))
    assert len(set(paths)) == 1
    assert paths[0].stat().st_size > 0
    assert not list(paths[0].parent.glob("*.tmp"))


def test_compiler_error_is_its_first_error_line(compiles, tmp_path):
    source = tmp_path / "broken.c"
    source.write_text("int f(void) {\n    return undeclared_name;\n}\n")
    with pytest.raises(ConvcheckError) as raised:
        build.compile_shared([source], "broken", sanitized=False)
    message = str(raised.value)
    assert "\n" not in message
    assert "broken.c:2" in message and "undeclared_name" in message
    assert not list((tmp_path / "cache").glob("*broken*"))


def test_unknown_revision(compiles):
    with pytest.raises(ConvcheckError, match="revision='main' must be one of legacy, current"):
        build.build_library("main")
