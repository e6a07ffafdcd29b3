"""Building the native judge's pieces: an op's kernel, one shared library per revision,
sanitized or plain; and the C worker program (``worker_main.c`` with the op's call unit,
``build_worker``) that judges with any library of that op's ABI.

An op's pieces are its ``NativeKernel`` (``convcheck.ops``): a revision's library is its
``sources[revision]``. Builds are cached in ``$CONVCHECK_CACHE`` (default
``~/.cache/convcheck``) under a hash of the sources, the flags and the compiler's version,
and written atomically (a temporary file renamed into place), so concurrent builds of the
same library are safe. The worker includes ``worker_protocol.h``, generated from
``convcheck/sandbox/protocol.py`` and ``wire.py`` at build time (``worker_protocol_header``),
and ``worker_unit.h``, the op's entry names (``worker_unit_header``), each hashed with the
sources: a worker is cached per op. Nothing is fetched: the compiler is clang if it is on
PATH, else gcc.
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

from convcheck import registry
from convcheck.errors import ConvcheckError
from convcheck.model import check_revision
from convcheck.native import wire
from convcheck.native.dtypes import DTYPE_CODES
from convcheck.sandbox import protocol

SOURCE_DIR = Path(__file__).resolve().parent

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
# The generic worker's files: main, then its parts (each says what it holds), then the
# helpers it shares with every op's call unit.
WORKER_SOURCES = (
    "worker_main.c",
    "worker_request.c",
    "worker_values.c",
    "worker_process.c",
    "worker_buffer.c",
    "convcheck_unit.c",
)
WORKER_HEADERS = ("worker_request.h", "worker_values.h", "worker_process.h", "worker_buffer.h")
WORKER_PROTOCOL_HEADER = "worker_protocol.h"
WORKER_UNIT_HEADER = "worker_unit.h"
UNIT_HEADER = "convcheck_unit.h"
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


def source_folder(kernel: registry.NativeKernel) -> str:
    """Where ``kernel``'s sources are, from the repository's root (``convcheck/...``): for
    code-scanning reports, which name a C file by its place in the repository."""
    root = Path(registry.__file__).resolve().parents[1]
    return kernel.directory.relative_to(root).as_posix()


def kernel_of(op: str = registry.DEFAULT_OP) -> registry.NativeKernel:
    """``op``'s C pieces; a ConvcheckError for an op without them."""
    kernel = registry.get(op).native
    if kernel is None:
        raise ConvcheckError(f"op {op} has no native kernel (its Op.native is None)")
    return kernel


def build_library(revision: str, sanitized: bool = True, op: str = registry.DEFAULT_OP) -> Path:
    """The path of ``op``'s kernel library for ``revision``, compiled on first use."""
    check_revision(revision)
    kernel = kernel_of(op)
    sources = [kernel.directory / name for name in kernel.sources[revision]]
    headers = [kernel.directory / name for name in kernel.headers]
    return compile_shared(sources, f"{kernel.library}-{revision}", sanitized, headers=headers)


def build_worker(sanitized: bool = True, op: str = registry.DEFAULT_OP) -> Path:
    """The path of ``op``'s C worker program (``WORKER_SOURCES`` and the op's call unit),
    built with the flags of a library that is ``sanitized`` or not, compiled on first use."""
    kernel = kernel_of(op)
    flags = SANITIZED_FLAGS if sanitized else PLAIN_FLAGS
    return _compile(
        [*(SOURCE_DIR / name for name in WORKER_SOURCES), kernel.directory / kernel.call_unit],
        f"convcheck-worker-{op}-{'asan' if sanitized else 'plain'}",
        tuple(flag for flag in flags if flag not in _LIBRARY_ONLY),
        [
            *(SOURCE_DIR / name for name in (UNIT_HEADER, *WORKER_HEADERS)),
            kernel.directory / kernel.abi_header,
            # What the ABI header includes (pooling's includes convolution's).
            *(kernel.directory / name for name in kernel.headers),
        ],
        libraries=WORKER_LIBRARIES,
        generated=(
            (WORKER_PROTOCOL_HEADER, worker_protocol_header()),
            (WORKER_UNIT_HEADER, worker_unit_header(kernel)),
        ),
    )


def worker_protocol_header() -> str:
    """The C worker's ``worker_protocol.h``: the sandbox's protocol, the codes of the
    answers' verdicts and of the arguments' kinds and dtypes, and the tensor flags of the
    wire (``wire``), each from its one definition in Python."""
    enums = {_c_name("VERDICT", verdict): code for code, verdict in enumerate(wire.VERDICTS)}
    enums |= {_c_name("ARG", kind): code for code, kind in enumerate(wire.ARG_KINDS)}
    enums |= {"TENSOR_PRESENT": wire.TENSOR_PRESENT, "TENSOR_OUTPUT": wire.TENSOR_OUTPUT}
    enums |= {_c_name("DTYPE", dtype): code for dtype, code in DTYPE_CODES.items()}
    enums["DTYPE_COUNT"] = len(DTYPE_CODES)
    return protocol.c_header(WORKER_PROTOCOL_HEADER, enums)


def _c_name(prefix: str, name: str) -> str:
    return f"{prefix}_{name.upper().replace('-', '_')}"


def worker_unit_header(kernel: registry.NativeKernel) -> str:
    """The C worker's ``worker_unit.h``: the op's ABI header, version and entry names."""
    version, name, check, run = kernel.entry_points
    guard = "CONVCHECK_WORKER_UNIT_H"
    lines = [
        f"/* {WORKER_UNIT_HEADER}: generated from the op's NativeKernel by",
        " * convcheck/native/build.py. */",
        f"#ifndef {guard}",
        f"#define {guard}",
        f'#include "{kernel.abi_header}"',
        f'#define CONVCHECK_UNIT_HEADER "{kernel.abi_header}"',
        f'#define CONVCHECK_UNIT_VERSION_ENTRY "{version}"',
        f'#define CONVCHECK_UNIT_NAME "{name}"',
        f'#define CONVCHECK_UNIT_CHECK "{check}"',
        f'#define CONVCHECK_UNIT_RUN "{run}"',
        f"enum {{ CONVCHECK_UNIT_VERSION = {kernel.abi_version} }};",
        f"#endif /* {guard} */",
        "",
    ]
    return "\n".join(lines)


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
    source_dir = sources[0].parent
    # Each directory of the sources and headers is searched: a worker's call unit, in its
    # op's folder, includes the worker's unit header.
    search = dict.fromkeys(path.parent for path in [*sources, *headers])
    fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=target.name, suffix=".tmp")
    os.close(fd)
    include = tempfile.mkdtemp(dir=target.parent, prefix=target.name, suffix=".include")
    try:
        for name, text in generated:
            Path(include, name).write_text(text)
        command = [cc, *flags, "-I", include, *(f"-I{d}" for d in search), "-o", temporary]
        # The first directory's sources by name, so sanitizer reports name their sites as
        # ``checks_legacy.c:123``; another's by its path.
        command += [path.name if path.parent == source_dir else str(path) for path in sources]
        command += libraries
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
