"""A call of ``avg_pool2d.out``. Its JSON form::

{"input": {"sizes": [1, 2, 5, 5], "dtype": "float32"},
 "out":   {"sizes": [1, 2, 2, 2], "dtype": "float32"},
 "kernel_size": [2, 2], "stride": [2, 2], "padding": [0, 0],
 "ceil_mode": false, "count_include_pad": true, "divisor_override": null,
 "int64_fill": null}

The kernel's loops add and divide int64 data in int64, so an int64 input's values can
be undefined behaviour (INT64_MIN / -1, a window's sum past INT64_MAX). ``int64_fill``
sets them: every element of an int64 input holds it. Absent (the simplest), or for any
other dtype, the input holds the small values every run holds (``convcheck.values``).
"""

from __future__ import annotations

from convcheck.case import Case, TensorSpec
from convcheck.frozen import frozen
from convcheck.schema import boolean, int_list, optional_int, tensor


@frozen
class AvgPool2dCase(Case):
    input: TensorSpec = tensor()
    out: TensorSpec = tensor(output=True)
    kernel_size: tuple[int, ...] = int_list(simplest=1, low=1)
    # Empty means "the kernel size", as in ATen.
    stride: tuple[int, ...] = int_list(simplest=1, low=1)
    padding: tuple[int, ...] = int_list(simplest=0, low=0)
    ceil_mode: bool = boolean()
    count_include_pad: bool = boolean()
    divisor_override: int | None = optional_int(simplest=1, low=1)
    # Not an argument of the kernel: its input's values (see above). The shrinker tries
    # it absent, then 0, then -1.
    int64_fill: int | None = optional_int(simplest=0, low=0)

    OP = "avg_pool2d"
