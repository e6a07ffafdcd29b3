"""The deterministic data every judge that computes is given, so values can be compared.

Small integers, exactly representable in every dtype (uint8 and bool included), so the
only differences between two correct kernels are in accumulation, not in the inputs.
"""

from __future__ import annotations

import numpy as np

from convcheck.case import TensorSpec

# Where each tensor's sequence starts, by its name (0 for a name not here): different
# offsets keep input, weight and bias from being the same sequence. The C worker is sent
# them (convcheck.native.wire).
OFFSETS = {"input": 0, "weight": 3, "bias": 5}


def logical_values(spec: TensorSpec, role: str) -> np.ndarray:
    """float64 array of shape ``spec.sizes``: element i (row-major) is a small integer."""
    n = spec.numel
    i = np.arange(n, dtype=np.int64)
    raw = (i * 7 + OFFSETS.get(role, 0)) % 11
    if spec.dtype == "bool":
        raw = raw % 2
    elif spec.dtype != "uint8":
        raw = raw - 5
    return raw.astype(np.float64).reshape(spec.sizes)
