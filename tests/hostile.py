"""The misbehaving target of the robustness tests, built from
``tests/native/hostile_target.c`` (its header says what each ``groups`` value and each
define makes it do)."""

from pathlib import Path

import pytest

from convcheck.native.build import compile_shared

NATIVE_DIR = Path(__file__).resolve().parents[1] / "convcheck" / "ops" / "convolution" / "native"
SOURCE = Path(__file__).parent / "native" / "hostile_target.c"


def build(directory: Path, *defines: str) -> str:
    """The library's path, built in ``directory`` with each name of ``defines`` defined."""
    (directory / "convcheck_abi.h").write_text((NATIVE_DIR / "convcheck_abi.h").read_text())
    source = directory / "hostile_target.c"
    source.write_text("".join(f"#define {name}\n" for name in defines) + SOURCE.read_text())
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CONVCHECK_CACHE", str(directory / "cache"))
        return str(compile_shared([source], "hostile", sanitized=False))
