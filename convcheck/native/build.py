"""Building convcheck's kernel: one shared library per revision, sanitized or plain; and the
C worker program (``worker_main.c``, ``build_worker``) that judges with any such library.

A library is ``convcheck.c``, ``checks_shared.c``, ``elements.c`` and ``conv_loops.c`` with
the revision's own ``checks_<revision>.c``. Builds are cached in ``$CONVCHECK_CACHE`` (default
``~/.cache/convcheck``) under a hash of the sources, the flags and the compiler's version,
and written atomically (a temporary file renamed into place), so concurrent builds of the
same library are safe. The worker includes ``worker_protocol.h``, generated from
``convcheck/sandbox/protocol.py`` at build time (``worker_protocol_header``) and hashed with
the sources. Nothing is fetched: the compiler is clang if it is on PATH, else gcc.
"""

from __future__ import annotations

import functools
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from convcheck.errors import ConvcheckError
from convcheck.model import check_revision
from convcheck.native.wire import VERDICTS
from convcheck.sandbox import protocol

SOURCE_DIR = Path(__file__).resolve().parent
SHARED_SOURCES = ("convcheck.c", "checks_shared.c", "elements.c", "conv_loops.c")
HEADERS = ("convcheck_abi.h", "convcheck_internal.h", "conv_loops.h", "elements.h")

SANITIZED_FLAGS = (
    "-std=c11",
    "-g",
    "-O1",
    "-fno-omit-frame-pointer",
    "-fsanitize=address,undefined",
    "-fno-sanitize-recover=all",
    "-shared",
    "-fPIC",
)
PLAIN_FLAGS = ("-std=c11", "-O2", "-shared", "-fPIC")
# The C worker (worker_main.c) is a program: the same flags, without the library's.
_LIBRARY_ONLY = ("-shared", "-fPIC")
WORKER_SOURCE = "worker_main.c"
WORKER_PROTOCOL_HEADER = "worker_protocol.h"
WORKER_LIBRARIES = ("-ldl", "-lm")

# What a worker running a sanitized library needs: the first report is fatal and ends in
# an abort, and a leak at exit is no finding of ours.
ASAN_OPTIONS = "detect_leaks=0:abort_on_error=1"
UBSAN_OPTIONS = "halt_on_error=1:print_stacktrace=1"


def compiler(language: str = "C", names: tuple[str, str] = ("clang", "gcc")) -> str:
    """The first of ``names`` on PATH (clang before gcc); a ConvcheckError if neither is."""
    for name in names:
        path = shutil.which(name)
        if path is not None:
            return path
    raise ConvcheckError(f"no {language} compiler: neither {' nor '.join(names)} is on PATH")


@functools.cache
def compiler_version(cc: str) -> str:
    done = subprocess.run([cc, "--version"], capture_output=True, text=True, check=False)
    return done.stdout.strip()


def cache_dir() -> Path:
    root = os.environ.get("CONVCHECK_CACHE")
    path = Path(root) if root else Path.home() / ".cache" / "convcheck"
    path.mkdir(parents=True, exist_ok=True)
    return path


def build_library(revision: str, sanitized: bool = True) -> Path:
    """The path of the kernel library for ``revision``, compiled on first use."""
    check_revision(revision)
    sources = [SOURCE_DIR / name for name in SHARED_SOURCES]
    sources.append(SOURCE_DIR / f"checks_{revision}.c")
    headers = [SOURCE_DIR / name for name in HEADERS]
    return compile_shared(sources, f"convcheck-{revision}", sanitized, headers=headers)


def build_worker(sanitized: bool = True) -> Path:
    """The path of the C worker program (``worker_main.c``), built with the flags of a
    library that is ``sanitized`` or not, compiled on first use."""
    flags = SANITIZED_FLAGS if sanitized else PLAIN_FLAGS
    return _compile(
        [SOURCE_DIR / WORKER_SOURCE],
        f"convcheck-worker-{'asan' if sanitized else 'plain'}",
        tuple(flag for flag in flags if flag not in _LIBRARY_ONLY),
        [SOURCE_DIR / "convcheck_abi.h"],
        libraries=WORKER_LIBRARIES,
        generated=((WORKER_PROTOCOL_HEADER, worker_protocol_header()),),
    )


def worker_protocol_header() -> str:
    """The C worker's ``worker_protocol.h``: the sandbox's protocol and the codes of the
    answers' verdicts (``wire.VERDICTS``), each from its one definition in Python."""
    verdicts = {
        f"VERDICT_{verdict.upper().replace('-', '_')}": code
        for code, verdict in enumerate(VERDICTS)
    }
    return protocol.c_header(WORKER_PROTOCOL_HEADER, verdicts)


def compile_shared(
    sources: Sequence[Path],
    name: str,
    sanitized: bool = True,
    headers: Sequence[Path] = (),
) -> Path:
    """Compile C ``sources`` into a cached shared library ``lib<name>-<flavour>-<hash>.so``.

    Sources are compiled from their own directory and by file name, so sanitizer reports
    name sites as ``checks_legacy.c:123``. ``headers`` only feed the cache key.
    """
    flags = SANITIZED_FLAGS if sanitized else PLAIN_FLAGS
    flavour = "asan" if sanitized else "plain"
    return _compile(sources, f"lib{name}-{flavour}", flags, headers, suffix=".so")


def _compile(
    sources: Sequence[Path],
    stem: str,
    flags: Sequence[str],
    headers: Sequence[Path],
    suffix: str = "",
    libraries: Sequence[str] = (),
    generated: Sequence[tuple[str, str]] = (),
) -> Path:
    """``sources`` compiled with ``flags`` into the cache as ``<stem>-<hash><suffix>``;
    ``generated`` headers (a name and its text each) are written for the compiler to find."""
    cc = compiler()
    digest = hashlib.sha256()
    for part in (cc, compiler_version(cc), *flags, *libraries):
        digest.update(part.encode() + b"\0")
    contents = [(path.name, path.read_bytes()) for path in [*sources, *headers]]
    for name, content in [*contents, *((name, text.encode()) for name, text in generated)]:
        digest.update(name.encode() + b"\0")
        digest.update(content + b"\0")
    target = cache_dir() / f"{stem}-{digest.hexdigest()[:16]}{suffix}"
    if target.exists():
        return target
    directories = {path.parent for path in sources}
    assert len(directories) == 1, "sources come from one directory"
    (source_dir,) = directories
    fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=target.name, suffix=".tmp")
    os.close(fd)
    include = tempfile.mkdtemp(dir=target.parent, prefix=target.name, suffix=".include")
    try:
        for name, text in generated:
            Path(include, name).write_text(text)
        command = [cc, *flags, "-I", include, "-o", temporary]
        command += [*(path.name for path in sources), *libraries]
        done = subprocess.run(command, cwd=source_dir, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise ConvcheckError(f"building {stem} with {cc}: {first_error(done.stderr)}")
        os.chmod(temporary, 0o755)
        os.replace(temporary, target)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
        shutil.rmtree(include, ignore_errors=True)
    return target


def first_error(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for line in lines:
        if "error" in line:
            return line
    return lines[0] if lines else "the compiler failed and printed nothing"


@functools.cache
def sanitizer_runtime(cc: str | None = None) -> str:
    """The ASan runtime a worker preloads to load a sanitized library into Python."""
    cc = cc or compiler()
    if os.path.basename(cc).startswith("clang"):
        names: tuple[str, ...] = (
            "libclang_rt.asan.so",
            f"libclang_rt.asan-{platform.machine()}.so",
        )
    else:
        names = ("libasan.so",)
    for name in names:
        done = subprocess.run(
            [cc, f"-print-file-name={name}"], capture_output=True, text=True, check=False
        )
        path = done.stdout.strip()
        if done.returncode == 0 and os.path.isabs(path) and os.path.exists(path):
            return os.path.realpath(path)
    raise ConvcheckError(f"{cc} does not know where its ASan runtime ({names[0]}) is")


def worker_env(sanitized: bool) -> dict[str, str]:
    """Environment for a worker process; empty for a plain library."""
    if not sanitized:
        return {}
    return {
        "LD_PRELOAD": sanitizer_runtime(),
        "ASAN_OPTIONS": ASAN_OPTIONS,
        "UBSAN_OPTIONS": UBSAN_OPTIONS,
    }
