"""The toy window op's kernel, a target of its op (``JudgedWindow.targets``: ``python``).

The ``current`` checks as the C kernel would run them, written apart from the model's
steps (``window_op.py``), so that the two are judged against each other: int64 values,
the output size narrowed to int32.
"""

from __future__ import annotations

from collections.abc import Sequence

from window_op import WindowCase

from convcheck.outcome import Outcome
from convcheck.targets import Started

INT32_MAX = 2**31 - 1


def window(case: WindowCase) -> Outcome:
    input, out = case.input.sizes, case.out.sizes
    if len(input) != 3:
        return Outcome.reject("rank.input")
    if len(out) != 3:
        return Outcome.reject("rank.out")
    if len(case.kernel_size) != 1:
        return Outcome.reject("kernel_size.length")
    if len(case.stride) != 1:
        return Outcome.reject("stride.length")
    (kernel,), (stride,) = case.kernel_size, case.stride
    if stride < 1 or stride > INT32_MAX:
        return Outcome.reject("stride.range")
    if kernel < 1:
        return Outcome.reject("kernel.nonpos")
    if kernel > input[2]:
        return Outcome.reject("kernel.gt_input")
    positions = (input[2] - kernel) // stride + 1  # both non-negative: C's division
    positions = (positions + 2**31) % 2**32 - 2**31  # stored in int32
    if positions <= 0:
        return Outcome.reject("output.invalid")
    return Outcome.accept((input[0], input[1], positions))


class WindowKernel:
    def check(
        self, cases: Sequence[WindowCase], deadline: float | None = None
    ) -> list[Outcome | None]:
        return [window(case) for case in cases]

    # No values: the judges keep the checks' answer.
    run = check

    def cancel(self) -> None:
        pass

    def close(self) -> None:
        pass


def unavailable(revision: str) -> str:
    if revision != "current":
        return f"revision {revision!r}: the toy kernel has current's checks only"
    return ""


def start(where: str | None, revision: str, jobs: int, timeout: float, op: str) -> Started:
    return Started(WindowKernel())
