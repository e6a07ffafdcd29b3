"""A target that misbehaves cannot crash, confuse or outlive convcheck.

The targets are built from ``hostile_target.c`` (see its header for what each ``groups``
value makes it do). Every test here failed before the fix it guards: garbage on fds
3..31 broke the result pipe, a constructor's printf broke the ABI probe, out-of-ABI
results were read as sizes, a target's setsid child outlived the judge, a worker that
could not restart raised out of the campaign, and a hanging target held ``close()``.
"""

import threading
import time
from pathlib import Path

import pytest
from builders import conv
from hostile import build as _build
from processes import assert_all_die, pids_left_by_a_killed_parent, running

from convcheck.errors import ConvcheckError
from convcheck.native import NativeJudge


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    return _build(tmp_path_factory.mktemp("hostile"))


def _pids(path: Path) -> list[int]:
    return [int(line) for line in path.read_text().split()] if path.exists() else []


@pytest.fixture
def pid_file(tmp_path, monkeypatch):
    """Where the target writes the pids of what it forks (workers inherit the env)."""
    path = tmp_path / "pids"
    monkeypatch.setenv("HOSTILE_PIDS", str(path))
    return path


# -- a private channel -----------------------------------------------------------------------


def test_garbage_on_inherited_fds_never_reaches_the_results(tmp_path):
    library = _build(tmp_path, "GARBAGE")
    cases = [conv(), conv(groups=2)] * 25
    with NativeJudge(target=library, jobs=2) as judge:
        checked = judge.check(cases)
        ran = judge.run(cases[:4])
    assert [o.describe() for o in checked] == ["accept [1, 4, 3]"] * len(cases)
    assert [o.values for o in ran] == [(0.0,) * 12] * 4


def test_prints_in_constructor_and_destructor_do_not_break_the_probe(tmp_path):
    library = _build(tmp_path, "PRINT", "GARBAGE")
    with NativeJudge(target=library) as judge:
        assert judge.name == "hostile target"
        assert [o.describe() for o in judge.check([conv()] * 3)] == ["accept [1, 4, 3]"] * 3


# -- results outside the ABI ---------------------------------------------------------------

VIOLATIONS = {
    99: ("out_rank", "out_rank is 99, not in 0..16"),
    -5: ("out_rank", "out_rank is -5, not in 0..16"),
    7: ("out_sizes", "out_sizes[1] is -1372, negative"),
    8: ("accepted", "accepted is 2, not 0 or 1"),
    9: ("check", "the check id is not NUL-terminated within 64 bytes"),
}


def test_results_outside_the_abi_are_named_violations(hostile):
    cases = [conv(groups=groups) for groups in VIOLATIONS]
    with NativeJudge(target=hostile) as judge:
        for entry in (judge.check, judge.run):
            outcomes = entry(cases)
            assert [(o.verdict, o.check, o.detail) for o in outcomes] == [
                ("abi-violation", field, detail) for field, detail in VIOLATIONS.values()
            ]


def test_an_abi_violation_is_its_own_finding(hostile):
    from convcheck.judges import Judges

    with Judges("current", target=hostile, use_torch=False) as judges:
        found = judges.evaluate([conv(groups=groups) for groups in VIOLATIONS])
    assert [[(f.kind, f.signature, f.about_kernel) for f in each] for each in found] == [
        [("abi-violation", ("abi-violation", field), True)] for field, _ in VIOLATIONS.values()
    ]


# -- descendants ------------------------------------------------------------------------------


def test_a_setsid_child_of_the_target_dies_with_the_judge(hostile, pid_file):
    with NativeJudge(target=hostile, jobs=2) as judge:
        assert [o.verdict for o in judge.check([conv(groups=42)] * 3)] == ["accept"] * 3
        children = _pids(pid_file)
        assert len(children) == 3
        assert all(running(pid) for pid in children)  # they are there while the judge is
    assert [pid for pid in children if running(pid)] == []


def test_what_the_constructor_forks_dies_with_the_probe_and_the_judge(tmp_path, pid_file):
    """The probe that loads the library first (``probe_library``) is reaped as a tree,
    as every worker is: the children its constructor forked, setsid or not, go too."""
    forking = _build(tmp_path, "FORK_ON_LOAD")
    with NativeJudge(target=forking) as judge:
        assert judge.check([conv()])[0].verdict == "accept"
        # The probe's two, then the worker's two.
        assert len(_pids(pid_file)) >= 4
    assert [pid for pid in _pids(pid_file) if running(pid)] == []


@pytest.mark.parametrize("fork_server", [False, True], ids=["started", "forked"])
def test_what_a_target_forks_dies_with_a_sigkilled_judge(tmp_path, pid_file, fork_server):
    """Issue 32, defect 5: a SIGKILL leaves convcheck no time to reap what its workers'
    target forked, a plain child (the constructor's) or a setsid one (groups 42); its
    watchdog, which sees the end of convcheck, kills them."""
    forking = _build(tmp_path, "FORK_ON_LOAD")
    pool = pids_left_by_a_killed_parent(
        tmp_path,
        f"""
        from builders import conv
        from convcheck.native import NativeJudge
        native = NativeJudge(target={forking!r}, jobs=2, fork_server={fork_server})
        assert [o.verdict for o in native.check([conv(groups=42)] * 2)] == ["accept"] * 2
        pool = native._pool
        print(*[process.process.pid for process in pool._workers + pool._servers], flush=True)
        for spare in pool._spares:
            spare.adopt()
            print(spare.process.pid, flush=True)
        """,
    )
    children = _pids(pid_file)
    # The probe's two (reaped with it), each worker's two, and groups 42's.
    assert len(children) >= 6
    assert_all_die(pool + children)


def test_a_target_that_hangs_at_the_address_space_limit_is_out_of_memory(hostile):
    """A hang with the worker's address space spent is the memory it ran out of."""
    with NativeJudge(target=hostile, timeout=2.0) as judge:
        (outcome,) = judge.check([conv(groups=45)])
    assert (outcome.verdict, outcome.crash_kind) == ("crash", "out-of-memory"), outcome


def test_a_setsid_child_of_a_crashed_worker_is_reaped_at_once(hostile, pid_file):
    with NativeJudge(target=hostile) as judge:
        (crash,) = judge.check([conv(groups=43)])
        assert (crash.verdict, crash.crash_kind) == ("crash", "SIGSEGV")
        (child,) = _pids(pid_file)
        assert not running(child)
        assert judge.check([conv()])[0].verdict == "accept"


# -- a worker that cannot restart ----------------------------------------------------------


@pytest.fixture
def crashes_from_load(tmp_path, monkeypatch):
    """The constructor aborts from load ``n`` on (load 1 is the probe's)."""

    def crash_from(n: int) -> None:
        monkeypatch.setenv("HOSTILE_LOADS", str(tmp_path / "loads"))
        monkeypatch.setenv("HOSTILE_CRASH_FROM", str(n))

    return crash_from


def test_a_worker_that_cannot_restart_is_a_crash_not_an_abort(hostile, crashes_from_load):
    crashes_from_load(3)
    with NativeJudge(target=hostile, fork_server=False) as judge:
        outcomes = judge.check([conv(), conv(groups=0), conv(), conv()])
        again = judge.check([conv()])
    assert [(o.verdict, o.crash_kind) for o in outcomes + again] == [
        ("accept", None),
        ("crash", "SIGSEGV"),
        ("crash", "restart-failed"),
        ("crash", "restart-failed"),
        ("crash", "restart-failed"),
    ]


def test_the_other_workers_carry_on_without_one_that_cannot_start(hostile, crashes_from_load):
    crashes_from_load(3)  # the first worker starts; the second, and every restart, cannot
    with NativeJudge(target=hostile, jobs=2, fork_server=False) as judge:
        outcomes = judge.check([conv()] * 20)
    assert [o.describe() for o in outcomes] == ["accept [1, 4, 3]"] * 20


def test_forked_workers_never_load_the_library_again(hostile, crashes_from_load):
    crashes_from_load(3)  # load 2 is the fork server's: every worker is forked from it
    with NativeJudge(target=hostile, jobs=2) as judge:
        outcomes = judge.check([conv(), conv(groups=0), conv(), conv(groups=0), conv()])
    assert [(o.verdict, o.crash_kind) for o in outcomes] == [
        ("accept", None),
        ("crash", "SIGSEGV"),
        ("accept", None),
        ("crash", "SIGSEGV"),
        ("accept", None),
    ]


def test_a_worker_that_never_starts_is_still_a_setup_error(hostile, crashes_from_load):
    crashes_from_load(2)
    with (
        NativeJudge(target=hostile) as judge,
        pytest.raises(ConvcheckError, match="failed to start"),
    ):
        judge.check([conv()])


# -- abandoning a batch --------------------------------------------------------------------


def _await_pid(path: Path) -> int:
    """The pid the hanging target wrote: the hang has begun."""
    while not _pids(path):
        time.sleep(0.01)
    return _pids(path)[0]


def test_close_from_another_thread_does_not_wait_for_a_hanging_batch(hostile, pid_file):
    judge = NativeJudge(target=hostile, timeout=3600.0)
    answers = []
    batch = threading.Thread(target=lambda: answers.extend(judge.check([conv(groups=13)])))
    batch.start()
    worker = _await_pid(pid_file)
    judge.close()
    batch.join()
    assert answers == [None]
    assert not running(worker)


def test_cancel_returns_what_finished_and_refuses_more_until_close(hostile, pid_file):
    judge = NativeJudge(target=hostile, timeout=3600.0)
    try:
        assert judge.check([conv()])[0].verdict == "accept"  # a worker is up
        answers = []
        batch = threading.Thread(
            target=lambda: answers.extend(judge.check([conv(), conv(groups=13), conv()]))
        )
        batch.start()
        worker = _await_pid(pid_file)
        judge.cancel()
        batch.join()
        assert answers[0].verdict == "accept"
        assert answers[1:] == [None, None]
        assert not running(worker)
        assert judge.check([conv()]) == [None]
        judge.close()
        assert judge.check([conv()])[0].verdict == "accept"
    finally:
        judge.close()


def test_a_deadline_cuts_a_hanging_batch_short(hostile, pid_file):
    with NativeJudge(target=hostile, timeout=3600.0) as judge:
        assert judge.check([conv()])[0].verdict == "accept"
        requests = [judge._request(conv(groups=13), "check")]
        assert judge._pool.run(requests, deadline=time.monotonic() + 1.0) == [None]
        assert not running(_pids(pid_file)[0])
        assert judge.check([conv()])[0].verdict == "accept"
