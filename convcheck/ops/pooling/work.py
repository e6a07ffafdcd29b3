"""How long the pooling kernels' loops run: the estimate that makes a call which would
loop 2^40 times a finding ("work past limit"), predicted from the model's output sizes,
not a worker stuck until its timeout.

Not C arithmetic, and not a step: the loops' iteration count is a property of the call
and its output sizes (which the model computes), not a value the C holds; the solver,
which runs the steps symbolically, needs nothing of it.
"""

from __future__ import annotations

from convcheck import model
from convcheck.case import Case
from convcheck.ops.pooling.checks import Call, window
from convcheck.outcome import ACCEPT

# Loop iterations that read nothing, past which a call is a denial of service: ATen and
# the fixed loops answer the same calls visiting only the taps inside the input.
WORK_LIMIT = 1 << 32


def taps_inside(kernel: int, dilation: int, n: int) -> int:
    """At most how many of a window's taps can land inside an input dim of ``n``."""
    if dilation <= 0:
        # legacy's unchecked dilation: taps that stand still or walk backwards may all
        # land inside.
        return kernel
    return min(kernel, -(-n // dilation))


def loop_work(case: Case, revision: str) -> tuple[int, int]:
    """The loops' iterations on an accepted call, and how many of them read no input:
    every batch, channel and output position runs the window's taps (``legacy``: all of
    the kernel's, inside the input or not; ``current``: those inside). (0, 0) for a
    call the checks refuse or a sanitized kernel halts on."""
    run = model.run(case, revision)
    if run.outcome.verdict != ACCEPT or run.ub:
        return 0, 0
    call = Call(case)
    windows = 1
    for size in run.outcome.out_sizes or ():
        windows *= size
    taps = needed = 1
    for i in range(2):
        k, _, _, d = window(call, i)
        taps *= k
        needed *= taps_inside(k, d, case.input.sizes[-2 + i])  # type: ignore[attr-defined]
    if revision == "legacy":
        return windows * (1 + taps), windows * (taps - needed)
    return windows * (1 + needed), 0


def work_past_limit(case: Case, revision: str, limit: int = WORK_LIMIT) -> bool:
    """Whether the kernel would spend more than ``limit`` iterations on taps that read
    nothing: the finding a kernel with a work limit reports instead of hanging."""
    return loop_work(case, revision)[1] > limit
