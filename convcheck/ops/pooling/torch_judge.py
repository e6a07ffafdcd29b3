"""The pooling ops' torch judge: ATen's check path (``aten.check``), in this process.

It answers any call, of any sizes, with torch 2.13's verdict, check id and output sizes,
without a tensor: the check path is held to real torch by
``tests/ops_pooling/test_pool_aten.py``. It makes no real call (so no values, and no
process to crash: real torch on a huge window loops, where its check path answers at
once), and its intentional differences are ``differences.explain_difference``.

Where ATen's output size wraps (``pooling_output_shape`` keeps its quotient in an
``int``), torch accepts a call no window fits, with a size past 2^31: the verdict names
that as torch's own bug, and the kernel that refuses the call is not held to it.
"""

from __future__ import annotations

from typing import Any

from convcheck.fixedint import Exact
from convcheck.ops.pooling import aten
from convcheck.ops.pooling.checks import Call, window
from convcheck.ops.pooling.current import output_size
from convcheck.ops.pooling.differences import explain_difference
from convcheck.outcome import Outcome
from convcheck.torch_mapping import CheckPathJudge, CheckPathVerdict, TorchMapping

# The torch whose checks ``aten`` mirrors.
TORCH_VERSION = "2.13.0 (ATen's check path)"


class PoolingCheckPath(CheckPathJudge):
    """The judge ``Judges`` starts for a pooling op (``TorchMapping.judge``)."""

    torch_version = TORCH_VERSION

    def __init__(self, op: str) -> None:
        self.op = op

    def predict(self, case: Any) -> CheckPathVerdict:
        outcome = aten.check(case, self.op)
        return CheckPathVerdict(outcome, torch_bug=_wrapped(case, outcome))


def _wrapped(case: Any, outcome: Outcome) -> str | None:
    """Where torch accepted with an output size its own formula, over unbounded
    integers, does not give: the size wrapped."""
    if outcome.out_sizes is None:
        return None
    call, sizes = Call(case), case.input.sizes
    for i in range(2):
        k, s, p, d = window(call, i)
        exact = output_size(Exact(), "torch", sizes[-2 + i], k, p, s, d, case.ceil_mode)
        given = outcome.out_sizes[-2 + i]
        if exact != given:
            return f"pooling_output_shape wraps: dim {i} is {exact}, torch gives {given}"
    return None


def mapping(op: str) -> TorchMapping:
    """``op``'s torch mapping: the check path needs no torch installed."""

    def judge(jobs: int = 1, timeout: float = 20.0, warm: bool = False) -> PoolingCheckPath:
        return PoolingCheckPath(op)

    return TorchMapping(judge=judge, explain=explain_difference)
