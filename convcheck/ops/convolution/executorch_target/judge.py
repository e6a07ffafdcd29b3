"""The ExecuTorch judge: ExecuTorch 1.5.1's portable ``convolution.out``, from PyPI, behind
the sandbox. Same interface as ``convcheck.native.NativeJudge``."""

from __future__ import annotations

from convcheck import executorch_wheel
from convcheck.executorch_wheel.judge import WheelJudge
from convcheck.ops.convolution.executorch_target import logs
from convcheck.ops.convolution.executorch_target.expected import expected_outcome
from convcheck.targets import Started

# The target registry's (``convcheck.targets``): why this target cannot judge here.
unavailable = executorch_wheel.unavailable


def start(where: str | None, revision: str, jobs: int, timeout: float, op: str) -> Started:
    """The target registry's: ExecuTorch only runs whole, so the model says what it should
    answer (``expected_outcome``); its workers load torch, hence the longer timeout."""
    judge = ExecutorchJudge(jobs=jobs, timeout=max(timeout, 20.0))
    return Started(judge, expected_outcome, logs.CHECK_IDS)


class ExecutorchJudge(WheelJudge):
    """Judges convolutions with ExecuTorch's runtime in sandboxed worker processes.

    Each case becomes a one-operator program calling ``aten::convolution.out`` (crafted
    directly, see ``_craft.py``), loaded from bytes and run on deterministic inputs.
    ``check`` and ``run`` are the same execution (the kernel only runs whole); ``run``
    also returns the out values, in logical order, for small outputs. A case too large to
    run whole (see ``Limits``) is probed: its checks and out sizes only. A bias over-read
    seen in the values is a crash.
    """

    WORKER = "convcheck.ops.convolution.executorch_target.worker"
