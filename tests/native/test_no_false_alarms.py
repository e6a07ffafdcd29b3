"""convcheck's own failures are never the kernel's: on ``current`` the native judge finds
nothing, and when convcheck's code fails on a case that is a ``tool-error``, reported
apart from the kernel's findings and never minimised."""

import pytest
from builders import conv, t
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from convcheck import model
from convcheck.campaign import Campaign
from convcheck.findings import findings
from convcheck.judgement import Judgement
from convcheck.judges import Judges
from convcheck.native import NativeJudge, wire
from convcheck.outcome import Outcome
from convcheck.strategies import cases

# Accepted by current (the batch dim is 0), but numpy cannot even shape its buffers:
# found by `convcheck ci`, where it was reported as the kernel's crash. (Found with stride
# 1; since current also rejects out strides past int32, the strides keep out small.)
ZERO_ELEMENTS_HUGE_DIMS = conv(
    input=t(0, 3, 268435451, 2147483647),
    weight=t(3, 3, 2, 2),
    bias=None,
    out=t(0, 3, 1, 1),
    stride=(268435451, 2147483647),
    padding=(0, 0),
    dilation=(1, 1),
    output_padding=(0, 0),
)


def test_a_zero_element_call_needs_no_buffers(current):
    (outcome,) = current.run([ZERO_ELEMENTS_HUGE_DIMS])
    assert outcome == Outcome.accept((0, 3, 1, 1), values=())


def test_an_exception_in_convcheck_is_a_tool_error_not_a_crash():
    # A request the worker's own code cannot serve; the library is never called.
    with NativeJudge("current", c_worker=False) as judge:
        (answer,) = judge._pool.run([{"case": conv().to_json(), "mode": "both"}])
    outcome = NativeJudge.outcome(answer)
    assert outcome.verdict == "tool-error", outcome
    assert "mode: expected 'check' or 'run', got 'both'" in outcome.detail


def test_a_request_the_c_worker_cannot_read_is_a_tool_error_not_a_crash(current):
    assert current.program is not None
    request = wire.encode(conv(), run=False)
    wrong_mode, cut_short = b"\x02" + request[1:], request[:-3]
    answers = current._pool.run([wrong_mode, cut_short, request])
    outcomes = [NativeJudge.outcome(answer) for answer in answers]
    assert [o.verdict for o in outcomes] == ["tool-error", "tool-error", "accept"], outcomes
    assert "mode: expected 0 (check) or 1 (run)" in outcomes[0].detail
    assert "malformed request" in outcomes[1].detail


def test_a_request_above_the_c_workers_limit_is_a_tool_error_and_skipped(current):
    huge = bytes(64 << 20 | 1)  # REQUEST_LIMIT in worker_main.c, and one byte
    answers = current._pool.run([huge, wire.encode(conv(), run=False)])
    outcomes = [NativeJudge.outcome(answer) for answer in answers]
    assert [o.verdict for o in outcomes] == ["tool-error", "accept"], outcomes
    assert "above the C worker's limit" in outcomes[0].detail


def _judgement(case, **native) -> Judgement:
    wrapped, exact, found = model.classify(case, "current")
    return Judgement(case, "current", wrapped, exact, found, **native)


class _NoJudging:
    revision, target, stopped = "current", None, False

    def evaluate(self, cases, thrifty=None):
        raise AssertionError("a tool-error was handed to the minimiser")

    def keeps(self, signature):
        raise AssertionError("a tool-error was handed to the minimiser")


def test_a_tool_error_is_never_minimised():
    error = Outcome.tool_error("ValueError: array is too big")
    (finding,) = findings(_judgement(conv(), native_check=error))
    run = Campaign(_NoJudging())
    run.found[finding.key] = finding
    run.minimize_all(max_evaluations=10)
    assert run.found[finding.key] is finding


@pytest.fixture(scope="module")
def judges():
    with Judges("current", use_native=True, use_torch=False, jobs=1) as panel:
        yield panel


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=st.one_of(cases(), cases(small=True)))
@example(case=ZERO_ELEMENTS_HUGE_DIMS)
def test_current_gives_the_native_judge_nothing_to_report(judges, case):
    """Model against native kernel (check entry, and run entry for small calls)."""
    (found,) = judges.evaluate([case])
    assert [f.describe() for f in found] == [], case.dumps()
