"""The native judge: convcheck's C kernel (or a user's library of the same C ABI).

    from convcheck.native import NativeJudge
    with NativeJudge("legacy", jobs=2) as judge:
        outcomes = judge.check(cases)      # verdict, check id, output sizes
        outcomes = judge.run(cases)        # and the values, for small shapes

``build_library(revision, sanitized)`` compiles (and caches) the kernel library itself.
The C sources, the ABI header ``convcheck_abi.h`` and docs/abi.md describe the ABI.
"""

from __future__ import annotations

__all__ = ["NativeJudge", "RunLimits", "build_library"]


def __getattr__(name: str):
    # Imported on first use: a sandbox worker imports convcheck.native.worker, and so this
    # package, again after every crash; it must not pay for the parent's modules.
    if name == "NativeJudge":
        from convcheck.native.judge import NativeJudge

        return NativeJudge
    if name == "RunLimits":
        from convcheck.native.worker import RunLimits

        return RunLimits
    if name == "build_library":
        from convcheck.native.build import build_library

        return build_library
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
