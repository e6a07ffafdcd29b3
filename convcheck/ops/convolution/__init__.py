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

from convcheck.ops.convolution import current, known_bugs, legacy, report, shrink, solving
from convcheck.ops.convolution.case import ConvolutionCase
from convcheck.ops.convolution.checks import Call
from convcheck.ops.convolution.differences import explain_difference
from convcheck.ops.convolution.generate import (
    build_case,
    empty_input_with_strides_past_int32,
    valid_cases,
)
from convcheck.ops.convolution.native import KERNEL
from convcheck.registry import Op
from convcheck.steps import Revision
from convcheck.torch_mapping import TorchJudge, TorchMapping


# The oracle is imported when a judge starts: a campaign without torch never loads it.
def _torch_judge(jobs: int = 1, timeout: float = 20.0, warm: bool = False) -> TorchJudge:
    from convcheck.ops.convolution import torch_oracle

    return torch_oracle.TorchJudge(jobs=jobs, timeout=timeout, warm=warm)


def _torch_available() -> bool:
    from convcheck.ops.convolution import torch_oracle

    return torch_oracle.available()


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
    case_type = ConvolutionCase
    revisions = revisions_of(Call, legacy, current)

    build_case = staticmethod(build_case)
    rare = (empty_input_with_strides_past_int32,)
    solver_shapes = staticmethod(solving.solver_shapes)
    default_ranks = staticmethod(solving.default_ranks)
    seed_shapes = staticmethod(solving.seed_shapes)

    def solver_cases(self, revision: str) -> tuple:
        # Imported here: it needs z3, which the op itself does not.
        from convcheck.ops.convolution.solver_cases import solver_cases

        return solver_cases(revision)

    case_legend = report.CASE_LEGEND
    describe_case = staticmethod(report.describe_case)
    bug_class = staticmethod(known_bugs.bug_class)
    report_groups = report.REPORT_GROUPS
    valid_cases = staticmethod(valid_cases)
    shrink_passes = MappingProxyType(shrink.SHRINK_PASSES)
    list_length = staticmethod(shrink.list_length)
    native = KERNEL

    torch = TorchMapping(
        judge=_torch_judge,
        explain=explain_difference,
        available=_torch_available,
        install="pip install torch==2.13.0",
    )
    targets = MappingProxyType(
        {
            "executorch": "convcheck.ops.convolution.executorch_target.judge",
            "executorch-source:": "convcheck.ops.convolution.executorch_source.judge",
        }
    )


OP: Op = Convolution()  # annotated: mypy holds it to the protocol
