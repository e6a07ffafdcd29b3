"""A real target: ExecuTorch 1.5.1's portable ``convolution.out``, from PyPI.

    from convcheck.ops.convolution import executorch_target as et
    if et.available():
        with et.ExecutorchJudge(jobs=2) as judge:
            outcomes = judge.run(cases)             # verdict, check id, sizes, values
        wanted = [et.expected_outcome(c) for c in cases]   # what the model says it does

Install: ``pip install executorch==1.5.1 --no-deps flatbuffers ruamel.yaml tabulate``
(torch 2.13 stays). Nothing here imports executorch or torch until a judge starts its
workers; ``import convcheck`` never does. See docs/executorch.md.
"""

from __future__ import annotations

from convcheck import lazy
from convcheck.executorch_wheel import INSTALL, available

__all__ = ["INSTALL", "ExecutorchJudge", "Limits", "available", "expected_outcome"]


# Imported on first use (``convcheck.lazy``).
__getattr__ = lazy.attributes(
    __name__,
    {
        "ExecutorchJudge": "convcheck.ops.convolution.executorch_target.judge",
        "expected_outcome": "convcheck.ops.convolution.executorch_target.expected",
        "Limits": "convcheck.ops.convolution.executorch_target._plan",
    },
)
