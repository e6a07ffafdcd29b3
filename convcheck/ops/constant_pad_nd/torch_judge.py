"""constant_pad_nd's torch judge: ATen's check path (``torch_checks.check_path``), in this
process.

It answers any call, of any sizes, with torch 2.13's verdict, check id and output sizes,
without a tensor (the check path is held to real torch by
``tests/ops/test_constant_pad_nd.py``); no values. Its intentional differences are
``differences.explain_difference``.
"""

from __future__ import annotations

from typing import Any

from convcheck.ops.constant_pad_nd.differences import explain_difference
from convcheck.ops.constant_pad_nd.torch_checks import check_path
from convcheck.torch_mapping import CheckPathJudge, CheckPathVerdict, TorchMapping


class PadCheckPath(CheckPathJudge):
    torch_version = "2.13.0 (ATen's check path)"

    def predict(self, case: Any) -> CheckPathVerdict:
        return CheckPathVerdict(check_path(case))


def _judge(jobs: int = 1, timeout: float = 20.0, warm: bool = False) -> PadCheckPath:
    return PadCheckPath()


MAPPING = TorchMapping(judge=_judge, explain=explain_difference)
