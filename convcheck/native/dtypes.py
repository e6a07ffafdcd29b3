"""The dtype codes every native ABI and the worker's wire share (``enum convcheck_dtype``
in the ABI headers, ``worker_protocol.h``): ``convcheck.case.DTYPES`` in order.

Free of imports: a Python worker loads it at every start, and a worker starts again after
every crash.
"""

from __future__ import annotations

_DTYPES: tuple[str, ...] = ("uint8", "int8", "int16", "int32", "int64")
_DTYPES += ("float16", "float32", "float64", "bool", "bfloat16")
DTYPE_CODES = {name: code for code, name in enumerate(_DTYPES)}
