"""The C worker (``worker_main.c``) answers every case as convolution's Python worker
(``convcheck/ops/convolution/native/worker.py``) does: verdict, check id, output sizes,
values, and the kind and site of each sanitizer crash. Its values are held equal to
``convcheck.values`` by test_values.py, which runs through it."""

from pathlib import Path

import pytest
from builders import conv, t
from hostile import build as build_hostile
from processes import assert_all_die, pids_left_by_a_killed_parent

from convcheck.errors import ConvcheckError
from convcheck.generate import RandomSource
from convcheck.native import NativeJudge, judge, wire
from convcheck.native.limits import RunLimits
from convcheck.ops.convolution.generate import build_case

ROOT = Path(__file__).resolve().parents[2]


def _cases(seed: int, count: int, small: bool = True) -> list:
    src = RandomSource(seed)
    return [build_case(src, small=small) for _ in range(count)]


def _answers(outcomes) -> list:
    # The detail of a crash is its report's first line, whose addresses differ by process.
    return [
        (o.verdict, o.check, o.out_sizes, o.values, o.crash_kind, o.crash_site) for o in outcomes
    ]


# A few hundred generated cases, small (every dtype, layout, transposed or not: most run)
# and not (sizes up to 2^31 - 1: past the run limits); legacy crashes on many of them. The C
# workers forked by their server, and started (as when a server cannot fork).
@pytest.mark.parametrize("revision", ["legacy", "current"])
def test_c_and_python_workers_answer_alike(revision):
    cases = _cases(7, 250) + _cases(8, 100, small=False)
    cases += [conv(bias=t(1)), conv(groups=0), conv(bias=t(4, dtype="bool"))]
    answers = {}
    for c_worker, fork_server in ((False, True), (True, True), (True, False)):
        with NativeJudge(revision, jobs=2, c_worker=c_worker, fork_server=fork_server) as native:
            assert (native.program is not None) == c_worker
            answers[c_worker, fork_server] = (
                _answers(native.check(cases)),
                _answers(native.run(cases)),
            )
    assert answers[True, True] == answers[False, True]
    assert answers[True, False] == answers[False, True]
    checked, ran = answers[True, True]
    assert {a[0] for a in ran} >= {"accept", "reject"}
    assert any(a[3] for a in ran), "some case ran and has values"
    if revision == "legacy":
        assert {a[4] for a in checked + ran} >= {"division-by-zero", "heap-buffer-overflow READ"}


def test_run_limits_reach_the_c_worker():
    case = conv()  # out has 12 elements
    with NativeJudge("current", limits=RunLimits(max_out_elements=11)) as native:
        (small_enough,) = native.run([case])
    assert (small_enough.verdict, small_enough.values) == ("accept", None)


def test_without_a_compiler_the_python_worker_serves(monkeypatch):
    def no_compiler(sanitized: bool, op: str):
        raise ConvcheckError("no C compiler: neither clang nor gcc is on PATH")

    monkeypatch.setattr(judge, "build_worker", no_compiler)
    with NativeJudge("current") as native:
        assert native.program is None
        assert [o.describe() for o in native.check([conv()])] == ["accept [1, 4, 3]"]


def test_a_request_is_a_few_bytes_of_the_case():
    request = wire.encode(conv(), run=True)
    # mode and count; each argument's kind, then: 3 tensors of rank 3 (flags, rank, dtype
    # and offset, 24 bytes), the bias of rank 1, 4 lists of one value (16 bytes),
    # transposed, groups.
    assert len(request) == 2 + 3 * (5 + 24) + (5 + 8) + 4 * (1 + 16) + 2 + 9


# -- the sandbox's guarantees, for the C worker ---------------------------------------------


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    return build_hostile(tmp_path_factory.mktemp("hostile"))


def test_a_status_is_the_python_workers_exception(hostile):
    sites = []
    for c_worker in (True, False):
        with NativeJudge(target=hostile, c_worker=c_worker) as native:
            checked, ran, after = native.check([conv(groups=3)]) + native.run(
                [conv(groups=3), conv()]
            )
        sites.append((checked.crash_kind, checked.crash_site, ran.crash_site, after.verdict))
    assert (
        sites[0]
        == sites[1]
        == (
            "python-exception",
            "_Status: convcheck_check returned 3 (hostile.status)",
            "_Status: convcheck_check returned 3 (hostile.status)",
            "accept",
        )
    )


@pytest.mark.parametrize("fork_server", [False, True], ids=["started", "forked"])
def test_a_hang_is_a_hang_and_the_next_case_is_judged(hostile, fork_server):
    with NativeJudge(target=hostile, timeout=0.5, fork_server=fork_server) as native:
        assert native.program is not None
        outcomes = native.check([conv(groups=13), conv()])
    assert [o.verdict for o in outcomes] == ["hang", "accept"]


@pytest.mark.parametrize("fork_server", [False, True], ids=["started", "forked"])
def test_no_c_worker_outlives_its_parent(tmp_path, hostile, fork_server):
    processes = pids_left_by_a_killed_parent(
        tmp_path,
        f"""
        from builders import conv
        from convcheck.native import NativeJudge
        native = NativeJudge(target={hostile!r}, fork_server={fork_server})
        assert native.program is not None
        assert native.check([conv()])[0].verdict == "accept"
        pool = native._pool
        print(*[process.process.pid for process in pool._workers + pool._servers], flush=True)
        for spare in pool._spares:
            spare.adopt()
            print(spare.process.pid, flush=True)
        """,
    )
    # The worker; and the fork server, and the worker it forked ahead.
    assert len(processes) == (3 if fork_server else 1)
    assert_all_die(processes)


def test_a_plain_c_worker_has_its_address_space_limited(hostile):
    with NativeJudge(target=hostile, memory_limit_mb=256) as limited:
        assert limited.program is not None
        assert limited.check([conv(groups=44)])[0].check == "hostile.no_memory"
    with NativeJudge(target=hostile, memory_limit_mb=None) as unlimited:
        assert unlimited.check([conv(groups=44)])[0].verdict == "accept"


def test_a_target_with_a_thread_is_served_by_started_c_workers(tmp_path):
    library = build_hostile(tmp_path, "THREAD")
    with NativeJudge(target=library, jobs=2) as native:
        outcomes = native.check([conv(), conv(groups=0), conv()])
        assert not native._pool._forking  # the server said it cannot fork
    assert [(o.verdict, o.crash_kind) for o in outcomes] == [
        ("accept", None),
        ("crash", "SIGSEGV"),
        ("accept", None),
    ]
