"""Shared fixtures of the torch judge's tests: one judge, one run over generated cases.

Every module here starts with ``pytest.importorskip("torch")``: without PyTorch the
directory is skipped, with that reason.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from torch_cases import random_cases  # noqa: E402

# The agreement, normaliser, values and differences tests all read this one run.
GENERATED_SEED = 20260101
GENERATED_COUNT = 5000
THREADS = 2


@pytest.fixture(scope="session")
def judge():
    pytest.importorskip("torch", reason="the torch judge needs PyTorch")
    from convcheck.ops.convolution.torch_oracle import TorchJudge

    with TorchJudge(jobs=2, threads=THREADS) as j:
        yield j


@pytest.fixture(scope="session")
def generated(judge):
    """(cases, verdicts) for the seeded small cases, values included."""
    cases = random_cases(GENERATED_SEED, GENERATED_COUNT)
    return cases, judge.judge(cases, values=True)
