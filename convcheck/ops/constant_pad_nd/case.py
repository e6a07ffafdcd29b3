"""A call of ``constant_pad_nd.out``. Its JSON form::

{"input": {"sizes": [1, 2], "dim_order": [0, 1], "dtype": "float32"},
 "pad":   [1, 2],
 "value": 0,
 "out":   {"sizes": [1, 5], "dim_order": [0, 1], "dtype": "float32"}}

``pad`` holds (before, after) pairs from the last dim backwards, as torch's ``pad``
does. ``value`` is an int64 Scalar: the case format has no floating-point argument, and
an integral value is where the kernel's overflow check of the value lives.
"""

from __future__ import annotations

from convcheck.case import Case, TensorSpec
from convcheck.fixedint import INT64_MIN
from convcheck.frozen import frozen
from convcheck.schema import int_list, integer, tensor


@frozen
class ConstantPadNdCase(Case):
    input: TensorSpec = tensor()
    pad: tuple[int, ...] = int_list(simplest=0, low=0)
    # Any int64 is a value a person may write; whether it fits is the dtype's to say.
    value: int = integer(simplest=0, low=INT64_MIN)
    out: TensorSpec = tensor(output=True)

    OP = "constant_pad_nd"
