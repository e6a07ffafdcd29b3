"""The C ABI of ``convcheck_abi.h`` as ctypes types, and a case turned into a call struct.

Imported by the worker process (it loads the library) and by the parent's load check.
Keep its imports light: a worker starts again after every crash.
"""

from __future__ import annotations

import ctypes

from convcheck.native.dtypes import DTYPE_CODES

ABI_VERSION = 1
MAX_RANK = 16
SYMBOLS = ("convcheck_abi_version", "convcheck_name", "convcheck_check", "convcheck_run")


_Sizes = ctypes.c_int32 * MAX_RANK


class Tensor(ctypes.Structure):
    _fields_ = [
        ("rank", ctypes.c_int32),
        ("sizes", _Sizes),
        ("dim_order", _Sizes),
        ("dtype", ctypes.c_int32),
        ("data", ctypes.c_void_p),
    ]


_I64P = ctypes.POINTER(ctypes.c_int64)


class Call(ctypes.Structure):
    _fields_ = [
        ("input", Tensor),
        ("weight", Tensor),
        ("bias", Tensor),
        ("out", Tensor),
        ("has_bias", ctypes.c_int32),
        ("transposed", ctypes.c_int32),
        ("groups", ctypes.c_int64),
        ("stride", _I64P),
        ("stride_len", ctypes.c_int64),
        ("padding", _I64P),
        ("padding_len", ctypes.c_int64),
        ("dilation", _I64P),
        ("dilation_len", ctypes.c_int64),
        ("output_padding", _I64P),
        ("output_padding_len", ctypes.c_int64),
    ]


class Result(ctypes.Structure):
    _fields_ = [
        ("accepted", ctypes.c_int32),
        ("check", ctypes.c_char * 64),
        ("out_rank", ctypes.c_int32),
        ("out_sizes", _Sizes),
    ]


def declare(lib: ctypes.CDLL) -> None:
    """Set the prototypes of the four entries on a loaded library."""
    lib.convcheck_abi_version.restype = ctypes.c_int32
    lib.convcheck_abi_version.argtypes = []
    lib.convcheck_name.restype = ctypes.c_char_p
    lib.convcheck_name.argtypes = []
    for name in ("convcheck_check", "convcheck_run"):
        entry = getattr(lib, name)
        entry.restype = ctypes.c_int32
        entry.argtypes = [ctypes.POINTER(Call), ctypes.POINTER(Result)]


def violation(result: Result) -> tuple[str, str] | None:
    """``(field, what is wrong)`` when a filled result breaks the ABI, else None.

    Read before anything else is: a size out of range is not a size to allocate.
    """
    if result.accepted not in (0, 1):
        return "accepted", f"accepted is {result.accepted}, not 0 or 1"
    if not result.accepted:
        raw = ctypes.string_at(ctypes.addressof(result) + Result.check.offset, Result.check.size)
        if b"\0" not in raw:
            return "check", "the check id is not NUL-terminated within 64 bytes"
        if not result.check:
            return "check", "rejected without a check id"
        return None
    if not 0 <= result.out_rank <= MAX_RANK:
        return "out_rank", f"out_rank is {result.out_rank}, not in 0..{MAX_RANK}"
    for i in range(result.out_rank):
        if result.out_sizes[i] < 0:
            return "out_sizes", f"out_sizes[{i}] is {result.out_sizes[i]}, negative"
    return None


def _set_tensor(t: Tensor, spec: dict) -> None:
    sizes = spec["sizes"]
    rank = len(sizes)
    t.rank = rank
    t.sizes[:rank] = sizes
    order = spec.get("dim_order")
    t.dim_order[:rank] = order if order is not None else range(rank)
    t.dtype = DTYPE_CODES[spec["dtype"]]
    t.data = None


class CallBuilder:
    """One reusable call struct, filled from a case's JSON form (``Case.to_json()``).

    The int64 lists live in arrays owned by the builder, grown when a longer list comes.
    """

    def __init__(self) -> None:
        self.call = Call()
        self._lists: dict[str, ctypes.Array] = {}

    def _set_list(self, name: str, values: list[int]) -> None:
        n = len(values)
        array = self._lists.get(name)
        if array is None or len(array) < n:
            array = (ctypes.c_int64 * max(n, 4))()
            self._lists[name] = array
            setattr(self.call, name, ctypes.cast(array, _I64P))
        array[:n] = values
        setattr(self.call, name + "_len", n)

    def fill(self, case: dict) -> Call:
        call = self.call
        _set_tensor(call.input, case["input"])
        _set_tensor(call.weight, case["weight"])
        bias = case["bias"]
        if bias is None:
            call.has_bias = 0
            call.bias.rank = 0
            call.bias.data = None
        else:
            call.has_bias = 1
            _set_tensor(call.bias, bias)
        _set_tensor(call.out, case["out"])
        call.transposed = 1 if case["transposed"] else 0
        call.groups = case["groups"]
        self._set_list("stride", case["stride"])
        self._set_list("padding", case["padding"])
        self._set_list("dilation", case["dilation"])
        self._set_list("output_padding", case["output_padding"])
        return call
