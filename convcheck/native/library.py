"""Loading a library of an op's C ABI, in a worker or the parent's probe process: it
must export the ABI's entry points and answer the version this convcheck speaks.

Free of heavy imports: a Python worker loads it at every start.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence

from convcheck.errors import ConvcheckError


def load_library(
    path: str, what: str, symbols: Sequence[str], header: str, version: int
) -> ctypes.CDLL:
    """Load ``path`` and check that it speaks an op's ABI (its entry ``symbols``, the
    version entry first and the name's second, declared in ``header`` at ``version``); a
    one-line ConvcheckError if not."""
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise ConvcheckError(f"{what} {path}: cannot be loaded ({e})") from None
    missing = [name for name in symbols if not hasattr(lib, name)]
    if missing:
        raise ConvcheckError(
            f"{what} {path}: missing symbol {missing[0]} (is it built against {header}?)"
        )
    version_entry, name_entry = getattr(lib, symbols[0]), getattr(lib, symbols[1])
    version_entry.restype, version_entry.argtypes = ctypes.c_int32, []
    name_entry.restype, name_entry.argtypes = ctypes.c_char_p, []
    given = version_entry()
    if given != version:
        raise ConvcheckError(
            f"{what} {path}: ABI version {given}, convcheck speaks version "
            f"{version} (rebuild it against this {header})"
        )
    return lib
