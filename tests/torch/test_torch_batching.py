"""Several real calls per worker request: the answers are each call's own, a crash is
the answer of the call that crashed (and costs one crash, not two), and the values come
back exactly, in logical order."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch", reason="the torch judge needs PyTorch")

from torch_cases import GARBAGE, SEGV, random_cases, verdict_key  # noqa: E402

from convcheck.ops.convolution.torch_oracle import CALLS_PER_REQUEST, TorchJudge  # noqa: E402
from convcheck.ops.convolution.torch_oracle._worker import (  # noqa: E402
    MARK,
    crashed_call,
    decode_values,
    encode_values,
)
from convcheck.sandbox import Crash  # noqa: E402


@pytest.fixture
def counted(judge, monkeypatch):
    """The session's judge, counting the requests its workers get and the crashes."""
    pool = judge._workers()
    seen = {"requests": 0, "calls": 0, "crashes": 0}
    run = pool.run

    def counting(requests, deadline=None):
        answers = run(requests, deadline)
        seen["requests"] += len(requests)
        seen["calls"] += sum(len(r["calls"]) for r in requests)
        seen["crashes"] += sum(isinstance(a, Crash) for a in answers)
        return answers

    monkeypatch.setattr(pool, "run", counting)
    return judge, seen


def test_a_crash_in_a_shared_request_is_its_own_calls_answer_and_crashes_once(counted):
    judge, seen = counted
    others = random_cases(11, 80)
    cases = others[:40] + [SEGV] + others[40:] + [SEGV]
    alone = [judge.judge([c])[0] for c in others]
    seen.update(requests=0, calls=0, crashes=0)
    together = judge.judge(cases)
    assert seen["requests"] < seen["calls"] / 2, seen  # the calls did share requests
    assert seen["crashes"] == 2, seen  # each SEGV call once, none run again
    crashed = [together[40], together[-1]]
    for v in crashed:
        assert v.outcome.verdict == "crash" and v.outcome.crash_kind == "SIGSEGV", v.describe()
        assert v.no_onednn.verdict == "accept" and v.torch_bug.startswith("verdict:")
    rest = together[:40] + together[41:-1]
    assert [verdict_key(v) for v in rest] == [verdict_key(v) for v in alone]


def test_without_a_mark_every_call_of_a_crashed_request_runs_again_alone(counted, monkeypatch):
    import convcheck.ops.convolution.torch_oracle as oracle

    judge, seen = counted
    others = random_cases(15, 30)
    cases = others[:15] + [SEGV] + others[15:]
    alone = [judge.judge([c])[0] for c in cases]
    monkeypatch.setattr(oracle, "crashed_call", lambda report, calls: None)
    seen.update(requests=0, calls=0, crashes=0)
    together = judge.judge(cases)
    assert seen["crashes"] == 2, seen  # in the shared request, then alone
    assert [verdict_key(v) for v in together] == [verdict_key(v) for v in alone]


def test_a_request_is_cut_so_that_every_worker_gets_some(counted):
    judge, seen = counted
    judge.judge(random_cases(12, 40))
    assert seen["calls"] >= 30, seen
    assert 2 * judge.jobs <= seen["requests"] <= seen["calls"] / 2, seen
    assert seen["calls"] <= seen["requests"] * CALLS_PER_REQUEST


def test_the_crashed_call_is_read_from_the_last_mark():
    report = f"{MARK}0\n{MARK}1\n{MARK}2\nFatal Python error: Segmentation fault\n"
    assert crashed_call(report, 3) == 2
    assert crashed_call(report, 2) is None  # not a call of this request
    assert crashed_call("Fatal Python error: Segmentation fault\n", 3) is None


@pytest.mark.parametrize(
    "dtype",
    ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int8", "uint8", "bool"],
)
def test_values_travel_exactly_in_logical_order_non_finite_included(dtype):
    """Every dtype's values come back as the tensor's own values in float64 (float32s on
    the wire where they hold them exactly), extremes, -0.0, NaN and infinities included."""
    wide = [[1.5, math.nan], [math.inf, -math.inf], [-0.0, 2.0**-1074], [3.0e38, -(2.0**-149)]]
    if dtype in ("int64", "int32", "int8", "uint8", "bool"):
        info = torch.iinfo(getattr(torch, dtype)) if dtype != "bool" else None
        low, high = (0, 1) if info is None else (info.min, info.max)
        wide = [[low, high], [0, 1], [high - 1, low + 1], [7, 0]]
    data = torch.tensor(wide, dtype=getattr(torch, dtype))
    layout = data.t().contiguous().t()  # the same values, strides in the other order
    assert layout.stride() != data.stride()
    got = decode_values(encode_values(layout))
    want = data.double().reshape(-1).tolist()
    assert len(got) == len(want)
    for x, y in zip(got, want, strict=True):
        assert (math.isnan(x) and math.isnan(y)) or (
            x == y and math.copysign(1, x) == math.copysign(1, y)
        ), (dtype, x, y)


def test_garbage_values_are_still_a_torch_bug_in_a_shared_request(judge):
    """(On the CPUs where oneDNN garbles this call: test_torch_reference says which.)"""
    cases = random_cases(13, 30) + [GARBAGE]
    v = judge.judge(cases)[-1]
    assert v.path == "real", v.describe()
    if v.outcome.values == v.no_onednn.values:
        assert not v.torch_bug, v.describe()
        pytest.skip("oneDNN computes this call right on this CPU")
    assert v.torch_bug and v.torch_bug.startswith("values:"), v.describe()


def test_a_judge_with_one_thread_configured_runs_every_call_with_one():
    with TorchJudge(jobs=1, threads=1) as judge:
        verdicts = judge.judge(random_cases(14, 30))
    assert {v.ran_threads for v in verdicts if v.path == "real"} == {1}
    assert judge.settings()["single_thread_calls"] is False


def test_workers_are_forked_from_a_server_with_torch_loaded_so_a_crash_costs_no_import(judge):
    """The server must stay single-threaded to fork (no OpenBLAS or OpenMP threads): if it
    grew a thread, the pool would fall back to starting workers, each importing torch."""
    verdicts = judge.judge([SEGV, GARBAGE])
    assert verdicts[0].outcome.verdict == "crash"
    pool = judge._workers()
    assert pool._forking and pool._servers, "the torch workers are started, not forked"
