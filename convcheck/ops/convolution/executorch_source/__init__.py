"""A user's own ExecuTorch checkout as a sanitized target.

    convcheck target executorch --source ~/executorch      # builds, prints the library
    convcheck fuzz --target executorch-source:~/executorch --revision legacy

Our adapter (``adapter.cpp``) and build recipe (``build.py``) compile the checkout's
portable ``convolution_out`` with ASan and UBSan; the checkout's sources stay the user's.
See docs/executorch-source.md.
"""

from __future__ import annotations

__all__ = ["PREFIX", "ExecutorchSourceJudge", "build_target"]

PREFIX = "executorch-source:"


def __getattr__(name: str):
    # Imported on first use: a sandbox worker imports this package after every crash.
    if name == "ExecutorchSourceJudge":
        from convcheck.ops.convolution.executorch_source.judge import ExecutorchSourceJudge

        return ExecutorchSourceJudge
    if name == "build_target":
        from convcheck.ops.convolution.executorch_source.build import build_target

        return build_target
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
