"""A call of ``convolution.out``. Its JSON form::

{"input":  {"sizes": [1, 2, 2], "dim_order": [0, 1, 2], "dtype": "float32"},
 "weight": {"sizes": [4, 2, 3], "dtype": "float32"},
 "bias":   {"sizes": [4], "dtype": "float32"},          (or null)
 "out":    {"sizes": [1, 4, 1], "dtype": "float32"},
 "stride": [2], "padding": [0], "dilation": [1],
 "transposed": false, "output_padding": [0], "groups": 1}
"""

from __future__ import annotations

from convcheck.case import Case, TensorSpec
from convcheck.frozen import frozen
from convcheck.schema import boolean, int_list, integer, tensor


@frozen
class ConvolutionCase(Case):
    input: TensorSpec = tensor()
    weight: TensorSpec = tensor()
    # Read contiguously whatever its order: its JSON form has none.
    bias: TensorSpec | None = tensor(optional=True, ordered=False)
    out: TensorSpec = tensor(output=True)
    stride: tuple[int, ...] = int_list(simplest=1, low=1)
    padding: tuple[int, ...] = int_list(simplest=0, low=0)
    dilation: tuple[int, ...] = int_list(simplest=1, low=1)
    transposed: bool = boolean()
    output_padding: tuple[int, ...] = int_list(simplest=0, low=0)
    groups: int = integer(simplest=1, low=1)

    OP = "convolution"
