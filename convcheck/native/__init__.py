"""The native judge: convcheck's C kernel (or a user's library of the same C ABI).

    from convcheck.native import NativeJudge
    with NativeJudge("legacy", jobs=2) as judge:
        outcomes = judge.check(cases)      # verdict, check id, output sizes
        outcomes = judge.run(cases)        # and the values, for small shapes

``build_library(revision, sanitized)`` compiles (and caches) the kernel library itself.
The C sources, the ABI header ``convcheck_abi.h`` and docs/abi.md describe the ABI.
"""

from __future__ import annotations

from convcheck import lazy

__all__ = ["NativeJudge", "RunLimits", "build_library"]


# Imported on first use (``convcheck.lazy``).
__getattr__ = lazy.attributes(
    __name__,
    {
        "NativeJudge": "convcheck.native.judge",
        "RunLimits": "convcheck.native.worker",
        "build_library": "convcheck.native.build",
    },
)
