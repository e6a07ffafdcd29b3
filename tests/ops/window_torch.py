"""The toy window op with a torch mapping and a kernel of its own, in tests alone.

The core is told nothing: ``JudgedWindow`` adds the two optional members an op gives when
it wants the torch and native judges (``Op.torch``, ``Op.targets``), and ``Judges``
starts them by asking the op.

* Its torch is a stand-in for ``torch.nn.functional.max_pool1d`` (a window with a kernel
  size and a stride): torch's rules for that call, in plain Python over unbounded
  integers (``max_pool1d``), held to real torch 2.13 on small calls by
  ``test_window_torch.py``. Real torch is not called while fuzzing: some of its calls
  with a huge kernel size hang in ``max_pool1d`` (a kernel of 2^40 on a 5-long input),
  and the convolution oracle's sandbox is its own, not the core's.
* Its kernel (``window_kernel``) is the ``current`` checks written again as a C kernel
  would run them, independent of the model's steps.
* One intentional difference: the kernel takes batched (3-D) inputs only, torch 2-D ones
  too.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from window_op import Window, WindowCase

from convcheck.outcome import ACCEPT, REJECT, Outcome
from convcheck.torch_mapping import CheckPathJudge, CheckPathVerdict, TorchMapping

FLOATS = ("float32", "float64", "float16", "bfloat16")


def max_pool1d(case: WindowCase) -> Outcome:
    """What ``max_pool1d(input, kernel_size, stride)`` answers, in torch's order of checks."""
    sizes = case.input.sizes
    if len(sizes) not in (2, 3) or 0 in sizes[-2:]:
        return Outcome.reject("input.shape")
    if len(case.kernel_size) != 1:
        return Outcome.reject("kernel_size.length")
    if len(case.stride) > 1:
        return Outcome.reject("stride.length")
    (kernel,) = case.kernel_size
    stride = case.stride[0] if case.stride else kernel  # an empty stride is the kernel's
    if kernel <= 0:
        return Outcome.reject("kernel.nonpos")
    if stride <= 0:
        return Outcome.reject("stride.nonpos")
    positions = (sizes[-1] - kernel) // stride + 1
    if positions < 1:
        return Outcome.reject("output.invalid")
    if case.input.dtype not in FLOATS:
        return Outcome.reject("dtype")
    return Outcome.accept((*sizes[:-1], positions))


class StandInTorch(CheckPathJudge):
    """The torch judge the toy's mapping starts; counts the cases it was given."""

    torch_version = "max_pool1d stand-in"

    def __init__(self, jobs: int = 1, timeout: float = 20.0, warm: bool = False) -> None:
        self.judged = 0
        self.closed = False

    def predict(self, case: WindowCase) -> CheckPathVerdict:
        self.judged += 1
        return CheckPathVerdict(max_pool1d(case), source="max_pool1d stand-in")

    def close(self) -> None:
        self.closed = True


@dataclass(frozen=True)
class Unbatched:
    name: str = "unbatched-input"
    reason: str = "the kernel takes (N, C, L) inputs only; torch also takes (C, L)"


def explain(case: WindowCase, revision: str, kernel: Outcome, torch: Outcome, verdict: Any):
    unbatched = case.input.rank == 2 and kernel.verdict == REJECT and kernel.check == "rank.input"
    return Unbatched() if unbatched and torch.verdict == ACCEPT else None


class JudgedWindow(Window):
    name = "judged_window"
    torch = TorchMapping(judge=StandInTorch, explain=explain)
    targets = MappingProxyType({"python": "window_kernel"})


OP = JudgedWindow()
