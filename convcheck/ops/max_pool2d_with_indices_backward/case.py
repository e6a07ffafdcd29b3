"""A call of ``max_pool2d_with_indices_backward.grad_input``. Its JSON form::

{"grad_output": {"sizes": [1, 1, 2, 2], "dtype": "float32", ...},
 "input":       {"sizes": [1, 1, 4, 4], ...},
 "kernel_size": [2], "stride": [], "padding": [0], "dilation": [1], "ceil_mode": false,
 "indices":     {"sizes": [1, 1, 2, 2], "dtype": "int64", ...},
 "grad_input":  {"sizes": [1, 1, 1, 1], ...},
 "indices_fill": 0, "planted_at": null, "planted_value": 0}

The kernel reads ``indices``' values, so the case carries them, by a rule that holds for
any size: every element (in memory order) is ``indices_fill``, except the one at flat
position ``planted_at`` (when that is inside the tensor), which is ``planted_value``.
The generator and the shrinker move the three like any other integer.
"""

from __future__ import annotations

from convcheck.case import Case, TensorSpec
from convcheck.frozen import frozen
from convcheck.schema import boolean, int_list, integer, optional_int, tensor


@frozen
class MaxPoolBackwardCase(Case):
    grad_output: TensorSpec = tensor()
    input: TensorSpec = tensor()
    kernel_size: tuple[int, ...] = int_list(simplest=1, low=1)
    stride: tuple[int, ...] = int_list(simplest=1, low=1)
    padding: tuple[int, ...] = int_list(simplest=0, low=0)
    dilation: tuple[int, ...] = int_list(simplest=1, low=1)
    ceil_mode: bool = boolean()
    indices: TensorSpec = tensor()
    grad_input: TensorSpec = tensor(output=True)
    # -1 is a valid index too (no maximum: skipped); 0 is the one a person writes.
    indices_fill: int = integer(simplest=0, low=-1)
    planted_at: int | None = optional_int(simplest=0, low=0)
    planted_value: int = integer(simplest=0, low=-1)

    OP = "max_pool2d_with_indices_backward"

    def index_values(self) -> dict[int, int]:
        """The distinct values ``indices`` holds, each at the first flat position it is
        at (the fill at 0, or at 1 where the plant is at 0)."""
        numel = self.indices.numel
        values: dict[int, int] = {}
        planted = self.planted_at is not None and 0 <= self.planted_at < numel
        if numel > (1 if planted else 0):
            values[self.indices_fill] = 1 if planted and self.planted_at == 0 else 0
        if planted:
            assert self.planted_at is not None
            first = values.get(self.planted_value)
            if first is None or self.planted_at < first:
                values[self.planted_value] = self.planted_at
        return values
