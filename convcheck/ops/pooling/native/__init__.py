"""The pooling ops' C kernel: both revisions' checks and loops for avg_pool2d and
max_pool2d_with_indices in one library of one ABI (``pool_abi.h``: the call names its op),
and the call unit both ops' workers are built with."""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType

from convcheck.registry import NativeKernel

# The element loads and stores and the tensor checks are convolution's kernel's.
_CONVOLUTION = "../../convolution/native"
_SHARED = (
    *("pool.c", "pool_shared.c", "pool_loops.c"),
    *(f"{_CONVOLUTION}/{name}" for name in ("elements.c", "tensors.c")),
)

KERNEL = NativeKernel(
    directory=Path(__file__).resolve().parent,
    call_unit="call.c",
    abi_header="pool_abi.h",
    entry_points=("pool_abi_version", "pool_name", "pool_check", "pool_run"),
    abi_version=1,
    library="pool",
    sources=MappingProxyType({r: (*_SHARED, f"pool_{r}.c") for r in ("legacy", "current")}),
    headers=(
        "pool_abi.h",
        "pool_internal.h",
        "pool_taps.h",
        *(f"{_CONVOLUTION}/{name}" for name in ("convcheck_abi.h", "elements.h", "tensors.h")),
    ),
)
