"""A user's own ExecuTorch checkout as a sanitized target.

    convcheck target executorch --source ~/executorch      # builds, prints the library
    convcheck fuzz --target executorch-source:~/executorch --revision legacy

Our adapter (``adapter.cpp``) and build recipe (``build.py``) compile the checkout's
portable ``convolution_out`` with ASan and UBSan; the checkout's sources stay the user's.
See docs/executorch-source.md.
"""

from __future__ import annotations

from convcheck import lazy

__all__ = ["PREFIX", "ExecutorchSourceJudge", "build_target"]

PREFIX = "executorch-source:"


# Imported on first use (``convcheck.lazy``).
__getattr__ = lazy.attributes(
    __name__,
    {
        "ExecutorchSourceJudge": "convcheck.ops.convolution.executorch_source.judge",
        "build_target": "convcheck.ops.convolution.executorch_source.build",
    },
)
