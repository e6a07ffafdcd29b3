"""The pooling ops of a user's ExecuTorch checkout as a sanitized target.

    convcheck fuzz --op avg_pool2d --target executorch-source:~/executorch --revision legacy

Our adapter (``adapter.cpp``) exports the pooling ABI (``pool_abi.h``) around the
checkout's portable ``avg_pool2d_out`` and ``max_pool2d_with_indices_out``; it is built as
convolution's source target is (``POOLING``, the recipe), and judged as any library of
that ABI, through the C worker. The adapter names a rejection's check id from the kernel's
log itself, and halts a run past the work limit as convcheck's own kernel does. See
docs/executorch-source.md.
"""

from __future__ import annotations

import os
from pathlib import Path

from convcheck.native.judge import NativeJudge
from convcheck.ops.convolution.executorch_source.build import Recipe, build_target
from convcheck.ops.convolution.executorch_source.judge import named_by_function
from convcheck.ops.pooling.native import KERNEL
from convcheck.outcome import Outcome
from convcheck.sandbox import Crash, Hang
from convcheck.targets import Started

POOLING = Recipe(
    name="executorch-pooling",
    adapter=Path(__file__).resolve().parent / "adapter.cpp",
    kernels=(
        "kernels/portable/cpu/op_avg_pool2d.cpp",
        "kernels/portable/cpu/op_max_pool2d_with_indices.cpp",
    ),
    abi_headers=tuple(
        KERNEL.directory / name
        for name in ("pool_abi.h", "pool_taps.h", "../../convolution/native/convcheck_abi.h")
    ),
)


def unavailable(revision: str) -> str:
    """The target registry's (``convcheck.targets``): a checkout runs any revision's
    calls; a broken checkout or build says so when it starts."""
    return ""


def build(where: str) -> Path:
    """The target registry's: the checkout at ``where``, built (once)."""
    return build_target(where, POOLING)


def start(where: str | None, revision: str, jobs: int, timeout: float, op: str) -> Started:
    """The target registry's: the checkout at ``where``, built (once) and started. Its
    check ids are convcheck's: the adapter reads the log."""
    assert where is not None  # the registry's prefix gives the path, "" at least
    return Started(PoolingSourceJudge(where, jobs=jobs, timeout=timeout))


class PoolingSourceJudge(NativeJudge):
    """``NativeJudge`` over the pooling library ``build_target`` builds of a checkout (once,
    then cached), its C++ crash sites named by function."""

    def __init__(self, source: str | os.PathLike, **options) -> None:
        self.source = str(source)
        # Either op: the two share the ABI, the call unit and so the worker.
        super().__init__(target=build_target(source, POOLING), op="avg_pool2d", **options)

    @staticmethod
    def outcome(answer: bytes | dict | Crash | Hang) -> Outcome:
        return named_by_function(NativeJudge.outcome(answer))
