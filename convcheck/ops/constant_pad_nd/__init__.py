"""``constant_pad_nd.out``: ExecuTorch's portable constant padding, which validates through
``kernel_ops_util`` as convolution does.

Its checks in both revisions (``legacy``, ``current``, what they share in ``checks``), the
torch mapping (``torch_judge``: the check path of ``torch_checks``, the differences of
``differences``), the bug classes of issue 30, the solver's shapes, and its C kernel
(``native``: both revisions' checks and loops), and ExecuTorch 1.5.1's kernel as a target
(``executorch_target``).
"""

from __future__ import annotations

from types import MappingProxyType

from convcheck.ops.constant_pad_nd import current, known_bugs, legacy, solving, torch_judge
from convcheck.ops.constant_pad_nd.case import ConstantPadNdCase
from convcheck.ops.constant_pad_nd.checks import Call
from convcheck.ops.constant_pad_nd.generate import build_case, valid_cases
from convcheck.ops.constant_pad_nd.native import KERNEL
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
    native = KERNEL
    torch = torch_judge.MAPPING
    targets = MappingProxyType({"executorch": "convcheck.ops.constant_pad_nd.executorch_target"})


OP: Op = ConstantPadNd()  # annotated: mypy holds it to the protocol
