"""Building a user's ExecuTorch checkout into a sanitized convcheck target.

Only the portable convolution and what it needs are compiled (``SOURCES``, from the
checkout) with our adapter (``adapter.cpp``, shipped with convcheck), sanitized like
convcheck's own kernel. The library is cached in ``$CONVCHECK_CACHE`` (default
``~/.cache/convcheck``) under a hash of the adapter, the flags, the compiler's version, the
translation units and every header under ``runtime/`` and ``kernels/portable/cpu/``: an
edit to any of them builds again, anything else in the checkout does not.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from convcheck.errors import ConvcheckError
from convcheck.native.build import (
    SANITIZED_FLAGS,
    cache_dir,
    compiler,
    compiler_version,
    first_error,
)
from convcheck.ops.convolution.native import KERNEL

ADAPTER = Path(__file__).resolve().parent / "adapter.cpp"

# The translation units of the checkout that the kernel and its checks need.
SOURCES = (
    "kernels/portable/cpu/op_convolution.cpp",
    "kernels/portable/cpu/util/kernel_ops_util.cpp",
    "kernels/portable/cpu/util/dtype_util.cpp",
    "runtime/core/portable_type/tensor_impl.cpp",
    "runtime/core/exec_aten/util/tensor_util_portable.cpp",
    "runtime/core/exec_aten/util/tensor_shape_to_c_string.cpp",
    "runtime/platform/abort.cpp",
    "runtime/platform/log.cpp",
    "runtime/platform/platform.cpp",
)
# Where headers that feed the cache key live.
HEADER_ROOTS = ("runtime", "kernels/portable/cpu")
C10_INCLUDE = "runtime/core/portable_type/c10"

# convcheck's own sanitized flags, in C++17, linked with every symbol resolved.
FLAGS = (
    "-std=c++17",
    *(flag for flag in SANITIZED_FLAGS if not flag.startswith("-std=")),
    "-Wl,-z,defs",
    "-DC10_USING_CUSTOM_GENERATED_MACROS",
    "-DSTANDALONE_TORCH_HEADER",
)


def checkout(source: str | os.PathLike) -> Path:
    """``source`` as an ExecuTorch checkout's root; a one-line error naming what is missing."""
    root = Path(source).expanduser().absolute()
    if not root.is_dir():
        raise ConvcheckError(f"executorch source {source}: no such directory")
    for relative in (*SOURCES, C10_INCLUDE):
        if not (root / relative).exists():
            raise ConvcheckError(
                f"executorch source {source}: not an ExecuTorch checkout (missing {relative})"
            )
    return root


def _key_files(root: Path) -> list[Path]:
    files = {root / relative for relative in SOURCES}
    for top in HEADER_ROOTS:
        files.update(path for path in (root / top).rglob("*.h") if path.is_file())
    return sorted(files)


def build_target(source: str | os.PathLike) -> Path:
    """The sanitized target library for the checkout ``source``, compiled on first use."""
    root = checkout(source)
    cxx = compiler("C++", ("clang++", "g++"))
    digest = hashlib.sha256()
    for part in (cxx, compiler_version(cxx), *FLAGS):
        digest.update(part.encode() + b"\0")
    for path in (ADAPTER, KERNEL.directory / KERNEL.abi_header, *_key_files(root)):
        digest.update(
            str(path.relative_to(root) if path.is_relative_to(root) else path.name).encode()
        )
        digest.update(b"\0" + path.read_bytes() + b"\0")
    target = cache_dir() / f"libconvcheck-executorch-asan-{digest.hexdigest()[:16]}.so"
    if not target.exists():
        _compile(root, cxx, target)
    return target


def _compile(root: Path, cxx: str, target: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="convcheck-executorch-") as scratch:
        # <executorch/...> includes resolve through a link named after the project.
        os.symlink(root, Path(scratch) / "executorch")
        temporary = Path(scratch) / target.name
        command = [
            cxx,
            *FLAGS,
            f"-I{scratch}",
            f"-I{root / C10_INCLUDE}",
            f"-I{KERNEL.directory}",
            "-o",
            str(temporary),
            str(ADAPTER),
            *(str(root / relative) for relative in SOURCES),
        ]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise ConvcheckError(
                f"building the ExecuTorch target from {root} with {cxx}: {first_error(done.stderr)}"
            )
        # Same file system as the cache only by luck: copy next to it, then rename.
        staged = target.with_name(target.name + f".{os.getpid()}.tmp")
        shutil.copyfile(temporary, staged)
        os.chmod(staged, 0o755)
        os.replace(staged, target)
