"""A call of ``max_pool2d_with_indices.out``. Its JSON form::

{"input":   {"sizes": [1, 2, 5, 5], "dtype": "float32"},
 "out":     {"sizes": [1, 2, 2, 2], "dtype": "float32"},
 "indices": {"sizes": [1, 2, 2, 2], "dtype": "int64"},
 "kernel_size": [2, 2], "stride": [2, 2], "padding": [0, 0], "dilation": [1, 1],
 "ceil_mode": false}
"""

from __future__ import annotations

from convcheck.case import Case, TensorSpec
from convcheck.frozen import frozen
from convcheck.schema import boolean, int_list, tensor


@frozen
class MaxPool2dWithIndicesCase(Case):
    input: TensorSpec = tensor()
    out: TensorSpec = tensor(output=True)
    indices: TensorSpec = tensor(output=True)
    kernel_size: tuple[int, ...] = int_list(simplest=1, low=1)
    # Empty means "the kernel size", as in ATen.
    stride: tuple[int, ...] = int_list(simplest=1, low=1)
    padding: tuple[int, ...] = int_list(simplest=0, low=0)
    dilation: tuple[int, ...] = int_list(simplest=1, low=1)
    ceil_mode: bool = boolean()

    OP = "max_pool2d_with_indices"
