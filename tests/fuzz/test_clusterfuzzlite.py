""".clusterfuzzlite/build.sh run as OSS-Fuzz runs it, and the fuzzers it makes run.

OSS-Fuzz's base-builder-python image is not here, so the test stands in for it: a fresh
virtualenv as its python3 (seeing this one's packages, so nothing is downloaded but the
build backend), the repository copied to ``$SRC/convcheck``, ``$OUT`` and ``$WORK`` set,
and ``tests/fuzz/compile_python_fuzzer`` (a PyInstaller one-file build, as the real one
does) on PATH. docs/clusterfuzzlite.md says what this leaves to the real service.
"""

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
HARNESSES = sorted(p.stem for p in (ROOT / "fuzz").glob("*.py"))
# Bounds against a broken build hanging the suite; no assertion depends on them.
BUILD_TIMEOUT = 3600
RUN_TIMEOUT = 600

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("PyInstaller") is None,
        reason="PyInstaller is not installed (pip install 'convcheck[fuzz]')",
    ),
    pytest.mark.skipif(
        importlib.util.find_spec("atheris") is None, reason="atheris is not installed"
    ),
    pytest.mark.skipif(shutil.which("zip") is None, reason="build.sh needs zip"),
]


def sources() -> list[str]:
    """The repository's files as a checkout would have them (tracked and new, not ignored)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    return [name for name in listed.decode().split("\0") if name and (ROOT / name).is_file()]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    base = tmp_path_factory.mktemp("oss-fuzz")
    src, out, work, bin_dir = (base / d for d in ("src", "out", "work", "bin"))
    for folder in (out, work, bin_dir):
        folder.mkdir()
    for name in sources():
        (src / "convcheck" / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, src / "convcheck" / name)
    shutil.copy2(ROOT / "tests" / "fuzz" / "compile_python_fuzzer", bin_dir)
    venv = base / "python"
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    (
        venv
        / "lib"
        / f"python{sys.version_info[0]}.{sys.version_info[1]}"
        / "site-packages"
        / "host.pth"
    ).write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {
        **os.environ,
        "PATH": f"{venv / 'bin'}:{bin_dir}:{os.environ['PATH']}",
        "SRC": str(src),
        "OUT": str(out),
        "WORK": str(work),
        "SANITIZER": "address",
    }
    env.pop("PYTHONPATH", None)  # the bundle must hold convcheck, not find it here
    done = subprocess.run(
        ["bash", "-eu", ".clusterfuzzlite/build.sh"],
        cwd=src / "convcheck",
        env=env,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    return out


def run_fuzzer(out, name, where, *args):
    """A fuzzer run in a runner's environment (no PYTHONPATH, no virtualenv), its stdout
    and stderr as one text: atheris prints the exception to stdout, libFuzzer to stderr."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(
        [out / name, f"-dict={out / name}.dict", f"-artifact_prefix={where}/", *args],
        cwd=where,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )


def seeds(out, name, where):
    where.mkdir(exist_ok=True)
    with zipfile.ZipFile(out / f"{name}_seed_corpus.zip") as archive:
        archive.extractall(where)
    return where


def test_each_harness_is_a_fuzz_target_with_its_dictionary_and_seeds(built):
    out = built
    reviewed = sum(
        json.loads(path.read_text()).get("op", "convolution") == "convolution"
        for path in (ROOT / "corpus").glob("*.json")
    )
    for name in HARNESSES:
        wrapper, package = out / name, out / f"{name}.pkg"
        assert os.access(wrapper, os.X_OK) and "LLVMFuzzerTestOneInput" in wrapper.read_text()
        assert package.is_file() and not os.access(package, os.X_OK), name
        assert (out / f"{name}.dict").read_text() == (ROOT / "fuzz" / "convcheck.dict").read_text()
        with zipfile.ZipFile(out / f"{name}_seed_corpus.zip") as archive:
            assert len(archive.namelist()) == reviewed, name


@pytest.mark.parametrize("name", [h for h in HARNESSES if h != "legacy_overflows"])
def test_a_fuzzer_runs_its_seed_corpus_and_fixed_runs_clean(built, name, tmp_path):
    out = built
    done = run_fuzzer(out, name, tmp_path, "-runs=300", seeds(out, name, tmp_path / "seeds"))
    assert done.returncode == 0, done.stdout[-4000:]
    assert "Done 300 runs" in done.stdout


def test_the_legacy_fuzzer_crashes_as_clusterfuzz_expects_and_reproduces(built, tmp_path):
    out = built
    name = "legacy_overflows"
    done = run_fuzzer(out, name, tmp_path, "-runs=100000", seeds(out, name, tmp_path / "seeds"))
    assert done.returncode != 0
    # What ClusterFuzz parses for a Python fuzzer: atheris' banner, the exception and its
    # traceback, the reproducer case in the message, and libFuzzer's test unit.
    assert "=== Uncaught Python exception: ===" in done.stdout
    assert "RuntimeError: " in done.stdout and "case:  {" in done.stdout
    assert "Traceback (most recent call last):" in done.stdout
    (crash,) = tmp_path.glob("crash-*")
    again = run_fuzzer(out, name, tmp_path, crash)
    assert again.returncode != 0 and "=== Uncaught Python exception: ===" in again.stdout
