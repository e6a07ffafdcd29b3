"""``constant_pad_nd.out``: ExecuTorch's portable constant padding, which validates through
``kernel_ops_util`` as convolution does.

Its checks in both revisions (``legacy``, ``current``, what they share in ``checks``), the
torch mapping's check path (``torch_checks``), the bug classes of issue 30, and the
solver's shapes. No C kernel of its own yet: the model and torch judge it.
"""

from __future__ import annotations

from convcheck.ops.constant_pad_nd import current, known_bugs, legacy, solving
from convcheck.ops.constant_pad_nd.case import ConstantPadNdCase
from convcheck.ops.constant_pad_nd.checks import Call
from convcheck.ops.constant_pad_nd.generate import build_case, valid_cases
from convcheck.ops.convolution import revisions_of
from convcheck.registry import Op


class ConstantPadNd(Op):
    case_type = ConstantPadNdCase
    revisions = revisions_of(Call, legacy, current)

    build_case = staticmethod(build_case)
    solver_shapes = staticmethod(solving.solver_shapes)
    default_ranks = staticmethod(solving.default_ranks)
    bug_class = staticmethod(known_bugs.bug_class)
    valid_cases = staticmethod(valid_cases)


OP: Op = ConstantPadNd()  # annotated: mypy holds it to the protocol
