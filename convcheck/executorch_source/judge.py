"""``ExecutorchSourceJudge``: a user's ExecuTorch checkout, built sanitized, as the native
judge (``--target executorch-source:DIR``)."""

from __future__ import annotations

import os

from convcheck.executorch_source.build import build_target
from convcheck.native.judge import NativeJudge


class ExecutorchSourceJudge(NativeJudge):
    """``NativeJudge`` over the library ``build_target(source)`` builds (once, then cached),
    with check ids read from the kernel's log."""

    def __init__(self, source: str | os.PathLike, **options) -> None:
        self.source = str(source)
        super().__init__(
            target=build_target(source), worker="convcheck.executorch_source.worker", **options
        )
