"""A judge's workers survive crash after crash, and closing it leaves no process behind."""

import os

from builders import conv

from convcheck.generate import RandomSource
from convcheck.native import NativeJudge
from convcheck.ops.convolution.generate import build_case


def _children() -> list[int]:
    """Child processes of this one, zombies included."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        if int(fields[1]) == os.getpid():
            found.append(int(entry))
    return found


# A crash storm: a few seconds with the C worker's fork server (half a minute when every
# crash restarted a Python worker).
def test_survives_a_thousand_consecutive_crashes_and_leaves_no_process():
    before = set(_children())
    # The plain build: a crash is a SIGFPE, and a restart costs no sanitizer report.
    with NativeJudge("legacy", sanitized=False, jobs=2, timeout=30.0) as judge:
        outcomes = judge.check([conv(groups=0)] * 1000 + [conv()])
        assert {(o.verdict, o.crash_kind) for o in outcomes[:-1]} == {("crash", "SIGFPE")}
        assert outcomes[-1].describe() == "accept [1, 4, 3]"
        # Requests put back after a crash may run after the last one: both workers can
        # end the batch dead, and not be replaced. One more call starts one.
        assert judge.check([conv()])[0].describe() == "accept [1, 4, 3]"
        assert set(_children()) - before  # the workers are there while the judge is open
    assert set(_children()) - before == set()


def test_sanitized_crashes_between_good_cases(legacy):
    cases = [conv(), conv(groups=0)] * 10 + [conv()]
    outcomes = legacy.check(cases)
    for case, outcome in zip(cases, outcomes, strict=True):
        if case.groups == 0:
            assert outcome.crash_kind == "division-by-zero"
        else:
            assert outcome.describe() == "accept [1, 4, 3]"


def test_check_results_are_deterministic(current, current_plain):
    """Same batch twice, and the sanitized and plain builds: the same answers."""
    cases = [build_case(RandomSource(seed)) for seed in range(2000)]
    first = current.check(cases)
    assert current.check(cases) == first
    assert current_plain.check(cases) == first
    assert all(outcome.verdict in ("accept", "reject") for outcome in first)
