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

__all__ = ["INSTALL", "ExecutorchJudge", "Limits", "available", "expected_outcome"]

INSTALL = "pip install executorch==1.5.1 --no-deps flatbuffers ruamel.yaml tabulate"


def available() -> bool:
    """Whether torch, flatbuffers and ExecuTorch's pybindings are installed.

    Looks for them without importing any (``executorch`` is looked up on disk: importing
    even its namespace packages is left to the workers).
    """
    import glob
    import os
    from importlib.util import find_spec

    for name in ("torch", "flatbuffers"):
        if find_spec(name) is None:
            return False
    spec = find_spec("executorch")
    if spec is None or not spec.submodule_search_locations:
        return False
    return any(
        glob.glob(os.path.join(location, "extension", "pybindings", "_C*.so"))
        for location in spec.submodule_search_locations
    )


# Imported on first use (``convcheck.lazy``).
__getattr__ = lazy.attributes(
    __name__,
    {
        "ExecutorchJudge": "convcheck.ops.convolution.executorch_target.judge",
        "expected_outcome": "convcheck.ops.convolution.executorch_target.expected",
        "Limits": "convcheck.ops.convolution.executorch_target._plan",
    },
)
