"""ExecuTorch 1.5.1's portable ``avg_pool2d.out`` and ``max_pool2d_with_indices.out``,
from PyPI, as a target.

    convcheck fuzz --op avg_pool2d --target executorch --revision legacy

Each case becomes a one-operator program (``program``) run by the wheel's runtime in
sandboxed workers (``convcheck.executorch_wheel.worker``); the check that failed is read
from the kernel's log (``logs``). The wheel has no sanitizers, so the model says what it
should answer (``expected``). Install as for convolution's wheel target:
docs/executorch.md.
"""

from __future__ import annotations

from convcheck import executorch_wheel
from convcheck.executorch_wheel.judge import ProgramJudge
from convcheck.targets import Started

# The target registry's (``convcheck.targets``): why this target cannot judge here.
unavailable = executorch_wheel.unavailable


def start(where: str | None, revision: str, jobs: int, timeout: float, op: str) -> Started:
    """The target registry's: ``op``'s kernel in the wheel; its workers load torch, hence
    the longer timeout."""
    from convcheck.ops.pooling.executorch_target.expected import expected_outcome

    judge = PoolingWheelJudge(op, jobs=jobs, timeout=max(timeout, 20.0))
    return Started(judge, expected_outcome)


class PoolingWheelJudge(ProgramJudge):
    """Judges ``op``'s cases with the wheel's kernel. ``check`` and ``run`` are the same
    execution (the kernel only runs whole); ``run`` also returns the values of out, then
    of the indices, for small outputs."""

    TARGET = "convcheck.ops.pooling.executorch_target.program"
