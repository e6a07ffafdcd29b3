"""constant_pad_nd's C kernel: both revisions' checks and loops in one library per
revision of one ABI (``pad_abi.h``), and the call unit its worker is built with."""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType

from convcheck.registry import NativeKernel

# The element stores and the tensor checks are convolution's kernel's.
_CONVOLUTION = "../../convolution/native"
_SHARED = ("pad.c", "pad_shared.c", *(f"{_CONVOLUTION}/{n}" for n in ("elements.c", "tensors.c")))

KERNEL = NativeKernel(
    directory=Path(__file__).resolve().parent,
    call_unit="call.c",
    abi_header="pad_abi.h",
    entry_points=("pad_abi_version", "pad_name", "pad_check", "pad_run"),
    abi_version=1,
    library="constant_pad_nd",
    sources=MappingProxyType({r: (*_SHARED, f"pad_{r}.c") for r in ("legacy", "current")}),
    headers=(
        "pad_abi.h",
        "pad_internal.h",
        *(f"{_CONVOLUTION}/{name}" for name in ("convcheck_abi.h", "elements.h", "tensors.h")),
    ),
)
