"""Exactly-sized C heap blocks for a tensor, filled and read in the tensor's dim order.

Each block comes from the C ``malloc`` (the ASan runtime's, when it is preloaded), so the
sanitizer knows its exact size. Python's own allocators (ctypes buffers, numpy arrays,
pymalloc) would hide an over-read in a larger or pooled block.
"""

from __future__ import annotations

import ctypes

import numpy as np

from convcheck.case import TensorSpec
from convcheck.values import logical_values

_NUMPY_TYPES = {
    "uint8": np.uint8,
    "int8": np.int8,
    "int16": np.int16,
    "int32": np.int32,
    "int64": np.int64,
    "float16": np.float16,
    "float32": np.float32,
    "float64": np.float64,
    "bool": np.bool_,
    "bfloat16": np.uint16,  # the bits; converted by hand below
}
_EMPTY_BLOCK = 16


def _spec(tensor: dict) -> TensorSpec:
    order = tensor.get("dim_order")
    return TensorSpec(
        tuple(tensor["sizes"]), tensor["dtype"], None if order is None else tuple(order)
    )


def to_storage(values: np.ndarray, dtype: str) -> np.ndarray:
    """float64 values as the dtype's bytes (bfloat16: round to nearest even)."""
    if dtype == "bfloat16":
        bits = values.astype(np.float32).view(np.uint32).astype(np.uint64)
        rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
        return rounded.astype(np.uint16)
    return values.astype(_NUMPY_TYPES[dtype])


def from_storage(stored: np.ndarray, dtype: str) -> np.ndarray:
    if dtype == "bfloat16":
        return (stored.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return stored.astype(np.float64)


def physical(values: np.ndarray, order: tuple[int, ...]) -> np.ndarray:
    """The logical array laid out in memory by ``order`` (outermost dim first)."""
    return np.ascontiguousarray(values.transpose(order))


def _allocate(libc: ctypes.CDLL, blocks: list, nbytes: int) -> int:
    """A block of exactly ``nbytes``; ``blocks`` collects what to free.

    An empty tensor gets the end of a 16-byte block: ASan serves ``malloc(0)`` as one
    addressable byte, so a 1-byte read of a ``malloc(0)`` block would go unnoticed, while
    any read at the end of a block is reported; 16 keeps that end aligned for every dtype.
    """
    block = libc.malloc(nbytes if nbytes else _EMPTY_BLOCK)
    if block is None:
        raise MemoryError(f"malloc({nbytes}) failed")
    blocks.append(block)
    return block if nbytes else block + _EMPTY_BLOCK


def filled_block(libc: ctypes.CDLL, blocks: list, tensor: dict, role: str) -> int:
    spec = _spec(tensor)
    if spec.numel == 0:
        # Nothing to fill, and numpy refuses shapes such as [0, 3, 2^28, 2^31 - 1].
        return _allocate(libc, blocks, 0)
    stored = physical(to_storage(logical_values(spec, role), spec.dtype), spec.order)
    data = stored.tobytes()
    block = _allocate(libc, blocks, len(data))
    if data:
        ctypes.memmove(block, data, len(data))
    return block


def empty_block(libc: ctypes.CDLL, blocks: list, tensor: dict) -> int:
    spec = _spec(tensor)
    nbytes = spec.numel * np.dtype(_NUMPY_TYPES[spec.dtype]).itemsize
    block = _allocate(libc, blocks, nbytes)
    if nbytes:
        ctypes.memset(block, 0, nbytes)
    return block


def read_block(block: int | None, tensor: dict) -> list[float]:
    """The tensor's elements in logical (row-major over sizes) order, as floats."""
    spec = _spec(tensor)
    storage = np.dtype(_NUMPY_TYPES[spec.dtype])
    nbytes = spec.numel * storage.itemsize
    if nbytes == 0:
        return []
    assert block is not None  # only an empty tensor has no block
    stored = np.frombuffer(ctypes.string_at(block, nbytes), dtype=storage)
    order = spec.order
    laid_out = stored.reshape([spec.sizes[d] for d in order])
    logical = laid_out.transpose(np.argsort(order))
    return from_storage(logical, spec.dtype).reshape(-1).tolist()
