"""Building a user's ExecuTorch checkout into a sanitized convcheck target.

A ``Recipe`` says what one op's target compiles: the checkout's translation units that its
portable kernel needs (``Recipe.sources``) and our adapter (shipped with convcheck, beside
``runtime.cpp``, which every adapter shares), sanitized like convcheck's own kernel.
``CONVOLUTION`` is convolution's; the pooling ops have theirs. The library is cached in
``$CONVCHECK_CACHE`` (default ``~/.cache/convcheck``) under a hash of our files, the
flags, the compiler's version, the translation units and every header under ``runtime/``
and ``kernels/portable/cpu/``: an edit to any of them builds again, anything else in the
checkout does not.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
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

HERE = Path(__file__).resolve().parent
RUNTIME = (HERE / "runtime.cpp", HERE / "runtime.h")

# The checkout's runtime that every portable kernel links with.
RUNTIME_SOURCES = (
    "kernels/portable/cpu/util/kernel_ops_util.cpp",
    "kernels/portable/cpu/util/dtype_util.cpp",
    "runtime/core/portable_type/tensor_impl.cpp",
    "runtime/core/exec_aten/util/tensor_util_portable.cpp",
    "runtime/core/exec_aten/util/tensor_shape_to_c_string.cpp",
    "runtime/platform/abort.cpp",
    "runtime/platform/log.cpp",
    "runtime/platform/platform.cpp",
)


@dataclass(frozen=True)
class Recipe:
    """One op's target: what of the checkout it compiles, and our adapter around it."""

    name: str  # in the library's file name
    adapter: Path  # exports the op's C ABI
    kernels: tuple[str, ...]  # the checkout's op_*.cpp files
    abi_headers: tuple[Path, ...]  # the ABI's headers, ours (their folders are included)

    @property
    def sources(self) -> tuple[str, ...]:
        """The translation units of the checkout that the kernels and their checks need."""
        return (*self.kernels, *RUNTIME_SOURCES)


CONVOLUTION = Recipe(
    name="executorch",
    adapter=HERE / "adapter.cpp",
    kernels=("kernels/portable/cpu/op_convolution.cpp",),
    abi_headers=(KERNEL.directory / KERNEL.abi_header,),
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


def checkout(source: str | os.PathLike, recipe: Recipe = CONVOLUTION) -> Path:
    """``source`` as an ExecuTorch checkout's root; a one-line error naming what is missing."""
    root = Path(source).expanduser().absolute()
    if not root.is_dir():
        raise ConvcheckError(f"executorch source {source}: no such directory")
    for relative in (*recipe.sources, C10_INCLUDE):
        if not (root / relative).exists():
            raise ConvcheckError(
                f"executorch source {source}: not an ExecuTorch checkout (missing {relative})"
            )
    return root


def _key_files(root: Path, recipe: Recipe) -> list[Path]:
    files = {root / relative for relative in recipe.sources}
    for top in HEADER_ROOTS:
        files.update(path for path in (root / top).rglob("*.h") if path.is_file())
    return sorted(files)


def build_target(source: str | os.PathLike, recipe: Recipe = CONVOLUTION) -> Path:
    """The sanitized target library of ``recipe`` for the checkout ``source``, compiled on
    first use."""
    root = checkout(source, recipe)
    cxx = compiler("C++", ("clang++", "g++"))
    digest = hashlib.sha256()
    for part in (cxx, compiler_version(cxx), *FLAGS):
        digest.update(part.encode() + b"\0")
    ours = (recipe.adapter, *RUNTIME, *recipe.abi_headers)
    for path in (*ours, *_key_files(root, recipe)):
        digest.update(
            str(path.relative_to(root) if path.is_relative_to(root) else path.name).encode()
        )
        digest.update(b"\0" + path.read_bytes() + b"\0")
    target = cache_dir() / f"libconvcheck-{recipe.name}-asan-{digest.hexdigest()[:16]}.so"
    if not target.exists():
        _compile(root, cxx, target, recipe)
    return target


def _compile(root: Path, cxx: str, target: Path, recipe: Recipe) -> None:
    with tempfile.TemporaryDirectory(prefix="convcheck-executorch-") as scratch:
        # <executorch/...> includes resolve through a link named after the project.
        os.symlink(root, Path(scratch) / "executorch")
        temporary = Path(scratch) / target.name
        command = [
            cxx,
            *FLAGS,
            f"-I{scratch}",
            f"-I{root / C10_INCLUDE}",
            *sorted({f"-I{header.parent}" for header in (*RUNTIME, *recipe.abi_headers)}),
            "-o",
            str(temporary),
            str(recipe.adapter),
            str(RUNTIME[0]),
            *(str(root / relative) for relative in recipe.sources),
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
