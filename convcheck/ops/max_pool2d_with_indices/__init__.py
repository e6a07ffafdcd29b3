"""``max_pool2d_with_indices.out`` (issue 29). Neither its stride nor its dilation is
checked: division by zero, ``dilation * (kernel - 1)`` overflowing, a negative dilation
leaving output unwritten. The shared checks, arithmetic and loops are
``convcheck.ops.pooling``'s; legacy.py and current.py list its steps.
"""

from __future__ import annotations

from convcheck.ops.max_pool2d_with_indices import current, known_bugs, legacy
from convcheck.ops.max_pool2d_with_indices.case import MaxPool2dWithIndicesCase
from convcheck.ops.max_pool2d_with_indices.generate import build_case
from convcheck.ops.pooling.op import PoolOp
from convcheck.registry import Op

OP: Op = PoolOp(
    MaxPool2dWithIndicesCase,
    build_case,
    known_bugs.LEGACY_BUG_CLASSES,
    (legacy, current),
)
