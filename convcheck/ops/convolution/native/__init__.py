"""Convolution's C kernel: both revisions' checks, the loops, the ABI header a user's
library implements (``convcheck_abi.h``, docs/abi.md) and the call unit (``call.c``) that
the generic worker calls it through."""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType

from convcheck.registry import NativeKernel

_SHARED = ("convcheck.c", "checks_shared.c", "elements.c", "tensors.c", "conv_loops.c")

KERNEL = NativeKernel(
    directory=Path(__file__).resolve().parent,
    sources=MappingProxyType(
        {revision: (*_SHARED, f"checks_{revision}.c") for revision in ("legacy", "current")}
    ),
    headers=(
        "convcheck_abi.h",
        "convcheck_internal.h",
        "conv_loops.h",
        "elements.h",
        "tensors.h",
    ),
    call_unit="call.c",
    abi_header="convcheck_abi.h",
    entry_points=("convcheck_abi_version", "convcheck_name", "convcheck_check", "convcheck_run"),
    abi_version=1,
    library="convcheck",
    python_worker="convcheck.ops.convolution.native.worker",
)
