"""``avg_pool2d.out``, ExecuTorch's portable average pooling (issue 29): stride unchecked,
a pool size that overflows with ``count_include_pad``, ``divisor_override`` dividing
INT64_MIN by -1. Its model revisions, case type, construction and bug classes are its
own modules; what it shares with max pooling is ``convcheck.ops.pooling``'s.
"""

from __future__ import annotations

from convcheck.ops.avg_pool2d import current, known_bugs, legacy
from convcheck.ops.avg_pool2d.case import AvgPool2dCase
from convcheck.ops.avg_pool2d.generate import build_case
from convcheck.ops.pooling.op import PoolOp
from convcheck.registry import Op

OP: Op = PoolOp(AvgPool2dCase, build_case, known_bugs.LEGACY_BUG_CLASSES, (legacy, current))
