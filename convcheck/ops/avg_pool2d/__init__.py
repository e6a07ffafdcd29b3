"""``avg_pool2d.out``: ExecuTorch's portable average pooling (issue 29).

Its case type, its revisions (``legacy``: the kernel as it is; ``current``: fixed, read
with ``docs/checks-pooling.md``), its construction and its known bug classes; what it
shares with ``max_pool2d_with_indices`` is in ``convcheck.ops.pooling``.
"""

from __future__ import annotations

from convcheck.ops import Op
from convcheck.ops.avg_pool2d import current, known_bugs, legacy
from convcheck.ops.avg_pool2d.case import AvgPool2dCase
from convcheck.ops.avg_pool2d.generate import build_case
from convcheck.ops.pooling.op import PoolOp, revisions


class AvgPool2d(PoolOp):
    name = "avg_pool2d"
    case_type = AvgPool2dCase
    revisions = revisions(legacy, current)
    build_case = staticmethod(build_case)
    classes = known_bugs.LEGACY_BUG_CLASSES


OP: Op = AvgPool2d()  # annotated: mypy holds it to the protocol
