"""``max_pool2d_with_indices.out``: ExecuTorch's portable max pooling with indices
(issue 29).

Its case type, its revisions (``legacy``: the kernel as it is; ``current``: fixed, read
with ``docs/checks-pooling.md``), its construction and its known bug classes; what it
shares with ``avg_pool2d`` is in ``convcheck.ops.pooling``.
"""

from __future__ import annotations

from convcheck.ops import Op
from convcheck.ops.max_pool2d_with_indices import current, known_bugs, legacy
from convcheck.ops.max_pool2d_with_indices.case import MaxPool2dWithIndicesCase
from convcheck.ops.max_pool2d_with_indices.generate import build_case
from convcheck.ops.pooling.op import PoolOp, revisions


class MaxPool2dWithIndices(PoolOp):
    name = "max_pool2d_with_indices"
    case_type = MaxPool2dWithIndicesCase
    revisions = revisions(legacy, current)
    build_case = staticmethod(build_case)
    classes = known_bugs.LEGACY_BUG_CLASSES


OP: Op = MaxPool2dWithIndices()  # annotated: mypy holds it to the protocol
