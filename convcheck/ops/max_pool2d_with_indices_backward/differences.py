"""Where ``current`` refuses a call torch accepts, on purpose: each check id with its
reason. Nothing else may part the two (the op's tests hold them to it)."""

from __future__ import annotations

from types import MappingProxyType

INTENTIONAL = MappingProxyType(
    {
        "dim_order.input": "the loops walk input's planes contiguously",
        "dim_order.grad_output": "the loops walk grad_output's planes contiguously",
        "dim_order.indices": "indices is read in grad_output's layout",
        "indices.dtype": "the loops read indices as int64",
        "indices.range": "an index outside its plane writes outside it; torch does not check",
        "dtype.mismatch": "the kernel writes grad_input in input's dtype; torch's out casts",
        "grad_input.resize": "grad_input's rank is the call's to give",
        "output.stride_too_large": "the tensor library's strides are int32",
    }
)
