"""The native judge: an op's C kernel (or a user's library of the op's C ABI), in the
generic C worker (``worker_main.c``), which names no op's parameter.

    from convcheck.native import NativeJudge
    with NativeJudge("legacy", jobs=2) as judge:
        outcomes = judge.check(cases)      # verdict, check id, output sizes
        outcomes = judge.run(cases)        # and the values, for small shapes

``build_library(revision, sanitized, op)`` compiles (and caches) an op's kernel library
itself. The op's ``native`` (``convcheck.registry.NativeKernel``) names its sources, its ABI
header (convolution's: ``ops/convolution/native/convcheck_abi.h``) and the call unit the
worker is built with; docs/abi.md describes the ABI.
"""

from __future__ import annotations

from convcheck import lazy

__all__ = ["NativeJudge", "RunLimits", "build_library"]


# Imported on first use (``convcheck.lazy``).
__getattr__ = lazy.attributes(
    __name__,
    {
        "NativeJudge": "convcheck.native.judge",
        "RunLimits": "convcheck.native.limits",
        "build_library": "convcheck.native.build",
    },
)
