"""The toy window op (``window_op.py``) with a C kernel of its own: its sources, ABI
header and call unit in ``window_native/``, declared as the op's ``native``."""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType

from window_op import Window

from convcheck.registry import NativeKernel

KERNEL = NativeKernel(
    directory=Path(__file__).resolve().parent / "window_native",
    sources=MappingProxyType(
        {revision: ("window.c", f"{revision}.c") for revision in ("legacy", "current")}
    ),
    headers=("window_abi.h",),
    call_unit="call.c",
    abi_header="window_abi.h",
    entry_points=("window_abi_version", "window_name", "window_check", "window_run"),
    abi_version=1,
    library="window",
)


class NativeWindow(Window):
    native = KERNEL


OP = NativeWindow()
