"""A campaign's exploration makes the oneDNN call on one in ``ONEDNN_EVERY`` of the calls
the check path sends to a oneDNN backend; for the others, the call without oneDNN stands
for both. Held to the judge that makes every call, on generated small calls."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="the torch judge needs PyTorch")

from convcheck.generate import random_cases  # noqa: E402
from convcheck.ops.convolution.torch_oracle import ONEDNN_BACKENDS, ONEDNN_EVERY, TorchJudge  # noqa: E402
from convcheck.ops.convolution.torch_oracle._compare import first_difference  # noqa: E402
from convcheck.outcome import ACCEPT  # noqa: E402


@pytest.fixture(scope="module")
def onednn_calls():
    """Small calls whose check path accepts them in a oneDNN backend, with a judge of
    their own (the sampling counts calls across batches)."""
    with TorchJudge(jobs=2) as judge:
        cases = [
            case
            for case in random_cases(61, 3000, small=True)
            if (checked := judge.predict(case)).backend in ONEDNN_BACKENDS
            and checked.outcome.verdict == ACCEPT
        ]
        yield judge, cases


def test_exploration_makes_the_onednn_call_on_the_same_few_calls_in_any_order(onednn_calls):
    """The sample is the calls', not the order's: judged in two batches or backwards,
    whole or cut as shards cut a campaign, the same calls make the oneDNN call."""
    judge, cases = onednn_calls
    assert len(cases) >= 4 * ONEDNN_EVERY, len(cases)
    first = judge.start(cases[:5], matters=lambda i, verdict: True)()
    rest = judge.start(cases[5:], matters=lambda i, verdict: True)()
    made = [k for k, v in enumerate(first + rest) if not v.onednn_skipped]
    backwards = judge.start(cases[::-1], matters=lambda i, verdict: True)()[::-1]
    assert made == [k for k, v in enumerate(backwards) if not v.onednn_skipped]
    # About one in ONEDNN_EVERY: some, and far from all.
    assert 0 < len(made) < len(cases) / 2, (len(made), len(cases))
    assert all(v.path == "real" for v in first + rest)


def test_the_call_without_onednn_stands_for_both_where_the_onednn_call_is_skipped(
    onednn_calls,
):
    judge, cases = onednn_calls
    explored = judge.start(cases, matters=lambda i, verdict: True)()
    full = judge.judge(cases)
    assert not any(v.onednn_skipped for v in full), "judge() made every oneDNN call"
    compared = 0
    for case, sampled, every in zip(cases, explored, full, strict=True):
        if not sampled.onednn_skipped:
            assert sampled == every, case.dumps()
            continue
        without = every.no_onednn
        assert sampled.outcome.same_answer(without), case.dumps()
        assert sampled.no_onednn is sampled.outcome and sampled.torch_bug is None
        if without.verdict == ACCEPT:
            dtype = every.out_dtype or "float32"
            assert first_difference(sampled.outcome.values, without.values, dtype) is None
            compared += 1
        assert "oneDNN call was not sampled" in sampled.describe()
    assert compared >= 3 * ONEDNN_EVERY, compared


def test_every_onednn_call_is_made_with_onednn_every_one(onednn_calls):
    judge, cases = onednn_calls
    judge.onednn_every = 1
    try:
        verdicts = judge.start(cases, matters=lambda i, verdict: True)()
    finally:
        judge.onednn_every = ONEDNN_EVERY
    assert not any(v.onednn_skipped for v in verdicts)
