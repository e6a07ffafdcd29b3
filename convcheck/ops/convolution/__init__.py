"""``convolution.out``: ExecuTorch's portable convolution, the first op convcheck fuzzed.

What is here is all that is about this kernel: its checks in both revisions (``legacy``,
``current``, what they share in ``checks``), the torch mapping (``torch_oracle``), the
intentional differences from torch, the upstream thread's bug classes, how its calls read
in a report and shrink, and the ExecuTorch targets (the 1.5.1 wheel, a user's checkout).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType, ModuleType
from typing import Any

from convcheck.model.steps import Revision
from convcheck.ops import Op
from convcheck.ops.convolution import current, known_bugs, legacy, report, shrink, solving
from convcheck.ops.convolution.case import ConvolutionCase
from convcheck.ops.convolution.checks import Call
from convcheck.ops.convolution.generate import (
    build_case,
    empty_input_with_strides_past_int32,
    valid_cases,
)


def revisions_of(call: Callable[[Any], Any], *modules: ModuleType) -> Mapping[str, Revision]:
    """Each module's revision, named as the module is, from its ``STEPS``, ``LOOP_STEPS``
    and ``CHECKS`` (every op that keeps a revision a module writes its revisions so)."""
    return MappingProxyType(
        {
            module.__name__.rpartition(".")[2]: Revision(
                module.__name__.rpartition(".")[2],
                module.STEPS,
                module.LOOP_STEPS,
                call,
                MappingProxyType(module.CHECKS),
            )
            for module in modules
        }
    )


class Convolution(Op):
    name = "convolution"
    case_type = ConvolutionCase
    revisions = revisions_of(Call, legacy, current)

    build_case = staticmethod(build_case)
    rare = (empty_input_with_strides_past_int32,)
    solver_shapes = staticmethod(solving.solver_shapes)
    default_ranks = staticmethod(solving.default_ranks)

    case_legend = report.CASE_LEGEND
    describe_case = staticmethod(report.describe_case)
    bug_class = staticmethod(known_bugs.bug_class)
    report_groups = report.REPORT_GROUPS
    valid_cases = staticmethod(valid_cases)
    shrink_passes = MappingProxyType(shrink.SHRINK_PASSES)
    list_length = staticmethod(shrink.list_length)


OP: Op = Convolution()  # annotated: mypy holds it to the protocol
