"""The sandbox: results in order, crashes and hangs as values, no worker left behind.

The handlers are in ``_handlers.py`` (tests/ is on sys.path, see tests/conftest.py, and
workers import with the parent's sys.path).
"""

import dataclasses
import os
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
from processes import assert_all_die, pids_left_by_a_killed_parent, running

from convcheck.errors import ConvcheckError
from convcheck.sandbox import Crash, Hang, WorkerPool, WorkerSpec
from convcheck.sandbox.descendants import POOL_PROCESSES

HANDLE = "sandbox._handlers:handle"
SPEC = WorkerSpec(handler=HANDLE)
FORKED = dataclasses.replace(SPEC, fork_server=True)
# Started workers, and workers forked by a fork server, behave the same.
both_ways = pytest.mark.parametrize("spec", [SPEC, FORKED], ids=["started", "forked"])


def _children() -> list[tuple[int, str, str]]:
    """(pid, state, command line) of this process's children, zombies included."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:  # exited while we looked
            continue
        state, ppid = stat.rpartition(")")[2].split()[:2]
        if int(ppid) == os.getpid():
            found.append((int(entry), state, cmdline.decode(errors="replace")))
    return found


def _leftovers() -> set[int]:
    """Children that are workers, or processes of this process's pools that nobody
    reaped. Not any zombie: this process is a subreaper, and an orphan of an earlier test
    (a killed CLI's watchdog, say, which looks for what to kill for seconds) may come here
    and die while a later test runs."""
    return {
        pid
        for pid, state, cmdline in _children()
        if "_worker_main" in cmdline or (state == "Z" and pid in POOL_PROCESSES)
    }


@pytest.fixture(autouse=True)
def no_leftover_workers():
    before = _leftovers()
    yield
    left = _leftovers() - before
    assert left == set(), [child for child in _children() if child[0] in left]


@both_ways
def test_mixed_batch_comes_back_in_order_with_each_outcome(spec):
    requests = [
        {"op": "echo", "n": 0},
        {"op": "segv"},
        {"op": "echo", "n": 2},
        {"op": "raise", "message": "bad stride"},
        {"op": "fpe"},
        {"op": "sleep", "seconds": 60},
        {"op": "echo", "n": 6},
        {"op": "null"},
        {"op": "exit", "status": 3},
        {"op": "echo", "n": 9},
    ]
    with WorkerPool(spec, jobs=2, timeout=3.0) as pool:
        results = pool.run(requests)

    assert len(results) == len(requests)
    for index in (0, 2, 6, 9):
        assert results[index] == requests[index]
    segv, raised, fpe, hang, null, exited = (results[i] for i in (1, 3, 4, 5, 7, 8))
    assert (segv.kind, segv.signal, segv.exit_status) == ("SIGSEGV", "SIGSEGV", None)
    # faulthandler's traceback names the Python line that was running.
    assert segv.site.startswith("_kill _handlers.py:")
    assert "Fatal Python error: Segmentation fault" in segv.report
    assert raised == Crash("python-exception", "ValueError: bad stride", None, None, raised.report)
    assert "Traceback" in raised.report and "bad stride" in raised.report
    assert (fpe.kind, fpe.signal) == ("SIGFPE", "SIGFPE")
    assert hang == Hang(3.0)
    assert (null.kind, null.signal) == ("SIGSEGV", "SIGSEGV")
    assert null.site.startswith("string_at __init__.py:")  # ctypes' own Python frame
    assert (exited.kind, exited.signal, exited.exit_status) == ("exit", None, 3)
    assert exited.to_json() == {"kind": "exit", "site": "", "signal": None, "exit_status": 3}
    assert hang.to_json() == {"kind": "hang", "timeout": 3.0}
    assert segv.describe().startswith("crash: SIGSEGV, _kill _handlers.py:")
    assert hang.describe() == "hang: no result within 3 s"


@both_ways
def test_a_crash_report_holds_only_the_crashing_requests_output(spec):
    with WorkerPool(spec) as pool:
        first, crash = pool.run(
            [
                {"op": "print", "text": "noise from an earlier request"},
                {"op": "print_and_segv", "text": "last words"},
            ]
        )
    assert first == {}
    assert crash.kind == "SIGSEGV"
    assert "last words" in crash.report
    assert "noise" not in crash.report


def test_a_handler_that_returns_no_dict_is_a_python_exception():
    with WorkerPool(SPEC) as pool:
        [result] = pool.run([{"op": "list"}])
    assert result.kind == "python-exception"
    assert result.site == "TypeError: handler returned list, not dict"


def test_jobs_share_a_small_batch():
    with WorkerPool(SPEC, jobs=2) as pool:
        first, second = pool.run([{"op": "pid", "sleep": 0.2}] * 2)
    assert first["pid"] != second["pid"]


def test_large_requests_and_results_pass_whole():
    # Bigger than a pipe's buffer both ways, so writes and reads come in pieces.
    requests = [{"op": "echo", "n": n, "text": "x" * (1 << 20)} for n in range(8)]
    with WorkerPool(SPEC, jobs=2) as pool:
        assert pool.run(requests) == requests


@both_ways
def test_workers_are_reused_across_runs_and_replaced_after_a_crash(spec):
    with WorkerPool(spec, jobs=1) as pool:
        [before] = pool.run([{"op": "pid"}])
        [again] = pool.run([{"op": "pid"}])
        raised, after_raise = pool.run([{"op": "raise", "message": "x"}, {"op": "pid"}])
        crash, after_crash = pool.run([{"op": "segv"}, {"op": "pid"}])
    assert before == again == after_raise  # an exception does not cost the worker
    assert raised.kind == "python-exception"
    assert crash.kind == "SIGSEGV"
    assert after_crash != before


@pytest.mark.slow  # a crash storm: ~15 s on 2 cores
@both_ways
def test_a_pool_survives_a_thousand_crashes_and_leaves_no_process(spec):
    before = _leftovers()
    with WorkerPool(spec, jobs=2, timeout=30.0) as pool:
        results = pool.run([{"op": "segv"}] * 1000 + [{"op": "pid"}])
        assert all(isinstance(r, Crash) and r.kind == "SIGSEGV" for r in results[:-1])
        # Crashed workers were reaped as the batch went: at most `jobs` left, all alive
        # (and the fork server, and the worker it forked ahead).
        assert len(_leftovers() - before) <= 2 + len(pool._servers) + len(pool._spares)
        pid = results[-1]["pid"]
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


@both_ways
def test_unsanitized_memory_limit_caps_the_address_space(spec):
    with WorkerPool(dataclasses.replace(spec, memory_limit_mb=256)) as pool:
        limit, small, python_big, c_big, after = pool.run(
            [
                {"op": "limit"},
                {"op": "alloc", "megabytes": 16},
                {"op": "alloc", "megabytes": 512},
                {"op": "malloc", "megabytes": 512},
                {"op": "alloc", "megabytes": 16},
            ]
        )
    assert limit == {"as": 256 << 20}
    assert small == after == {"length": 16 << 20}
    # Python's MemoryError is an exception in the handler, not a dead process.
    assert python_big.kind == "python-exception"
    assert python_big.site.startswith("MemoryError")
    # C's malloc says NULL.
    assert c_big == {"null": True}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            WorkerSpec(handler="sandbox._no_such_module:handle"),
            "ModuleNotFoundError: No module named 'sandbox._no_such_module'",
        ),
        (WorkerSpec(handler="sandbox._handlers:no_such_function"), "AttributeError"),
        (
            WorkerSpec(
                handler=HANDLE, init="sandbox._handlers:init_raises", config={"message": "no lib"}
            ),
            "RuntimeError: no lib",
        ),
        (WorkerSpec(handler=HANDLE, init="sandbox._handlers:init_segv"), "SIGSEGV"),
    ],
    ids=["no module", "no function", "init raises", "init crashes"],
)
@pytest.mark.parametrize("fork_server", [False, True], ids=["started", "forked"])
def test_a_worker_that_cannot_start_is_one_line_error(spec, expected, fork_server):
    spec = dataclasses.replace(spec, fork_server=fork_server)
    with WorkerPool(spec, jobs=2) as pool, pytest.raises(ConvcheckError) as error:
        pool.run([{"op": "echo"}] * 4)
    message = str(error.value)
    assert expected in message
    assert spec.handler in message
    assert "\n" not in message


@pytest.mark.parametrize(
    "build",
    [
        lambda: WorkerSpec(handler="no_colon"),
        lambda: WorkerSpec(handler=HANDLE, init="x:"),
        lambda: WorkerSpec(handler=HANDLE, config={"lib": object()}),
        lambda: WorkerSpec(handler=HANDLE, env={"LD_PRELOAD": 1}),
        lambda: WorkerSpec(handler=HANDLE, memory_limit_mb=0),
        lambda: WorkerSpec(handler=HANDLE, memory_limit_mb=1.5),
        lambda: WorkerPool(SPEC, jobs=0),
        lambda: WorkerPool(SPEC, jobs=True),
        lambda: WorkerPool(SPEC, timeout=0),
        lambda: WorkerPool(SPEC, timeout="5"),
        lambda: WorkerPool(SPEC).run([{"op": "echo"}, ["not", "a", "dict"]]),
        lambda: WorkerPool(SPEC).run([{"op": "echo", "value": {1, 2}}]),
    ],
)
def test_invalid_arguments_raise(build):
    with pytest.raises(ConvcheckError):
        build()


@pytest.fixture
def interruptible():
    """Python's own SIGINT handler for the test, whatever this process inherited: a shell
    that starts a command in the background (``make test &``) has it ignore SIGINT."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_keyboard_interrupt_during_run_reaps_every_worker(interruptible):
    before = _leftovers()
    with WorkerPool(SPEC, jobs=2, timeout=60.0) as pool:
        pool.run([{"op": "echo"}] * 2)
        assert len(_leftovers() - before) == 2
        timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
        try:
            with pytest.raises(KeyboardInterrupt):
                pool.run([{"op": "sleep", "seconds": 30}] * 2)
        finally:
            timer.join()
        assert _leftovers() - before == set()
        # The pool starts new workers on the next run.
        assert pool.run([{"op": "echo"}]) == [{"op": "echo"}]


@both_ways
def test_a_worker_that_finds_its_result_pipe_and_scribbles_on_it(spec):
    with WorkerPool(spec) as pool:
        scribbled, after = pool.run([{"op": "scribble"}, {"op": "echo"}])
    assert scribbled.kind == "corrupt-result", scribbled
    assert "not a result" in scribbled.report
    assert after == {"op": "echo"}


@both_ways
def test_cancel_and_deadline_abandon_a_sleeping_batch(spec):
    with WorkerPool(spec, jobs=2, timeout=3600.0) as pool:
        assert pool.run([{"op": "echo"}] * 2) == [{"op": "echo"}] * 2  # both workers up
        sleeping = [{"op": "sleep", "seconds": 3600}] * 2
        assert pool.run(sleeping, deadline=time.monotonic() + 0.5) == [None, None]
        pool.cancel()
        assert pool.run([{"op": "echo"}]) == [None]  # until close
        pool.close()
        assert pool.run([{"op": "echo"}]) == [{"op": "echo"}]


@pytest.mark.parametrize("fork_server", [False, True], ids=["started", "forked"])
def test_no_worker_outlives_its_parent(tmp_path, fork_server):
    processes = pids_left_by_a_killed_parent(
        tmp_path,
        f"""
        from convcheck.sandbox import WorkerPool, WorkerSpec
        pool = WorkerPool(WorkerSpec(handler={HANDLE!r}, fork_server={fork_server}))
        print(pool.run([{{"op": "pid"}}])[0]["pid"], flush=True)
        print(*[server.process.pid for server in pool._servers], flush=True)
        for spare in pool._spares:
            spare.adopt()
            print(spare.process.pid, flush=True)
        """,
    )
    # The worker; and the fork server, and the worker it forked ahead.
    assert len(processes) == (3 if fork_server else 1)
    assert_all_die(processes)


# -- the fork server ---------------------------------------------------------------------


def _stat(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()


def test_forked_workers_are_this_processs_children_each_in_a_session_of_its_own():
    with WorkerPool(FORKED, jobs=1) as pool:
        [before] = pool.run([{"op": "identity"}])
        [server] = pool._servers
        [crash] = pool.run([{"op": "segv"}])
        after, again = pool.run([{"op": "identity"}] * 2)
        assert crash.kind == "SIGSEGV"
        assert after["pid"] != before["pid"]  # the crashed worker was replaced
        assert again == after  # and its replacement is kept
        for answer in (before, after):
            assert answer["marker"] == server.marker_of(answer["pid"])  # its own marker
        ppid, _, session = _stat(after["pid"])[1:4]
        assert int(ppid) == os.getpid()
        assert int(session) == after["pid"]
        assert pool._servers == [server]  # one server forked them all
    assert not running(server.process.pid)


def test_a_warmed_server_serves_the_first_batch_and_is_reaped_unused():
    with WorkerPool(FORKED, jobs=1) as pool:
        pool.warm()
        [warmed] = pool._warming
        pool.warm()  # once: a second call starts nothing more
        assert pool._warming == [warmed] and running(warmed.process.pid)
        [answer] = pool.run([{"op": "identity"}])
        assert pool._servers == [warmed] and pool._warming == []
        assert answer["marker"] == warmed.marker_of(answer["pid"])  # forked by it
    assert not running(warmed.process.pid)
    with WorkerPool(FORKED, jobs=1) as pool:
        pool.warm()
        [unused] = pool._warming
    assert not running(unused.process.pid)  # warmed, never asked: still stopped


def test_a_crashed_worker_is_replaced_by_the_one_forked_ahead():
    with WorkerPool(FORKED, jobs=1) as pool:
        [first] = pool.run([{"op": "identity"}])
        [spare] = pool._spares
        spare.adopt()
        crash, after = pool.run([{"op": "segv"}, {"op": "identity"}])
        assert crash.kind == "SIGSEGV"
        assert after["pid"] == spare.process.pid != first["pid"]
        [next_spare] = pool._spares  # and the next one is forked ahead in turn
        assert next_spare is not spare
        next_spare.adopt()
        assert running(next_spare.process.pid)
    assert not running(next_spare.process.pid)


def test_a_server_with_a_thread_refuses_and_the_pool_starts_its_workers():
    spec = dataclasses.replace(FORKED, init="sandbox._handlers:init_thread")
    with WorkerPool(spec, jobs=2) as pool:
        answers = pool.run([{"op": "identity"}, {"op": "segv"}, {"op": "identity"}])
        assert pool._servers == []
    assert answers[1].kind == "SIGSEGV"
    for answer in (answers[0], answers[2]):
        # Started: the marker is not a forked worker's (which ends in its own pid).
        assert not answer["marker"].endswith(f".{answer['pid']:010d}")


# -- end to end: a C library built with ASan and UBSan ---------------------------------------

C_SOURCE = """\
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int64_t scaled_size(int64_t size, int64_t scale) {
    return size * scale; /* overflow */
}

int64_t divide(int64_t a, int64_t b) {
    return a / b; /* divide */
}

int32_t read_bias(int32_t n, int32_t index) {
    int32_t *bias = malloc((size_t)n * sizeof *bias);
    for (int32_t i = 0; i < n; i++) bias[i] = i;
    int32_t value = bias[index]; /* read */
    free(bias);
    return value;
}

int grab(size_t bytes) {
    void *p = malloc(bytes); /* grab */
    free(p);
    return p != NULL;
}

int call_null(void) {
    int (*volatile function)(void) = NULL;
    return function();
}

int touch(int megabytes) {
    for (int i = 0; i < megabytes; i++) memset(malloc(1 << 20), 1, 1 << 20);
    sleep(10);
    return 0;
}
"""


def _line(marker: str) -> int:
    return next(n for n, text in enumerate(C_SOURCE.splitlines(), 1) if marker in text)


@pytest.fixture(scope="module")
def sanitized_spec(tmp_path_factory):
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("no gcc")
    libasan = subprocess.run(
        [gcc, "-print-file-name=libasan.so"], capture_output=True, text=True
    ).stdout.strip()
    if not os.path.isabs(libasan):
        pytest.skip("gcc has no libasan")
    directory = tmp_path_factory.mktemp("native")
    (directory / "sanitized.c").write_text(C_SOURCE)
    library = directory / "libsanitized.so"
    subprocess.run(
        [gcc, "-shared", "-fPIC", "-g", "-O0", "-fsanitize=address,undefined"]
        + ["-fno-sanitize-recover=all", "-o", str(library), str(directory / "sanitized.c")],
        check=True,
    )
    return WorkerSpec(
        handler="sandbox._handlers:native",
        init="sandbox._handlers:init_native",
        config={"lib": str(library)},
        env={
            "LD_PRELOAD": libasan,
            "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=1",
            "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1",
        },
        memory_limit_mb=256,
        sanitized=True,
    )


@pytest.mark.parametrize("fork_server", [False, True], ids=["started", "forked"])
def test_sanitized_worker_reports_the_kind_and_the_c_function(sanitized_spec, fork_server):
    sanitized_spec = dataclasses.replace(sanitized_spec, fork_server=fork_server)
    calls = [
        ("scaled_size", [3, 4]),
        ("scaled_size", [2**63 - 1, 4]),
        ("divide", [-(2**63), -1]),
        ("divide", [1, 0]),
        ("read_bias", [4, 4]),
        ("call_null", []),
        ("grab", [512 << 20]),
        ("grab", [1 << 20]),
    ]
    with WorkerPool(sanitized_spec, jobs=2, timeout=60.0) as pool:
        results = pool.run([{"function": name, "args": args} for name, args in calls])
    fine, overflow, min_by_minus_one, by_zero, over_read, null_call, too_big, small = results
    assert fine == {"value": 12}
    assert small == {"value": 1}
    assert overflow.kind == "signed-integer-overflow"
    assert overflow.site == f"scaled_size sanitized.c:{_line('/* overflow */')}"
    assert "runtime error: signed integer overflow" in overflow.report
    assert min_by_minus_one.kind == "signed-integer-overflow"
    assert min_by_minus_one.site == f"divide sanitized.c:{_line('/* divide */')}"
    assert by_zero.kind == "division-by-zero"
    assert over_read.kind == "heap-buffer-overflow READ"
    assert over_read.site == f"read_bias sanitized.c:{_line('/* read */')}"
    assert over_read.signal == "SIGABRT"  # abort_on_error=1
    assert null_call.kind == "SEGV null"
    assert too_big.kind == "out-of-memory"
    assert too_big.site == f"grab sanitized.c:{_line('/* grab */')}"


@pytest.mark.parametrize("fork_server", [False, True], ids=["started", "forked"])
def test_sanitized_worker_over_its_rss_limit_is_out_of_memory(sanitized_spec, fork_server):
    sanitized_spec = dataclasses.replace(sanitized_spec, fork_server=fork_server)
    with WorkerPool(sanitized_spec, timeout=60.0) as pool:
        crash, after = pool.run(
            [
                {"function": "touch", "args": [512]},
                {"function": "scaled_size", "args": [5, 5]},
            ]
        )
    assert (crash.kind, crash.signal) == ("out-of-memory", "SIGKILL")
    assert "memory_limit_mb 256" in crash.report
    assert after == {"value": 25}


@pytest.fixture
def starts(monkeypatch):
    """How many worker processes the pools start (fork servers included)."""
    from convcheck.sandbox import processes

    started = []
    popen = processes._SPAWNER.popen

    def counted(*args, **kwargs):
        started.append(args)
        return popen(*args, **kwargs)

    monkeypatch.setattr(processes._SPAWNER, "popen", counted)
    return started


def test_a_batch_past_its_deadline_starts_no_worker(starts):
    """Starting each worker costs a process's start-up: a campaign of ``--jobs 64`` and
    a three-second time budget started all 64 after its deadline and ran 18 s."""
    with WorkerPool(SPEC, jobs=8) as pool:
        assert pool.run([{"op": "echo"}] * 8, deadline=time.monotonic()) == [None] * 8
        assert starts == []
        assert pool.run([{"op": "echo"}] * 2) == [{"op": "echo"}] * 2
        assert len(starts) == 2


def test_a_stream_with_nothing_to_serve_starts_no_worker(starts):
    delivered = []
    with WorkerPool(SPEC, jobs=8) as pool:
        pool.stream(lambda: None, lambda number, result: delivered.append(result))
    assert starts == [] and delivered == []


def test_abandoned_workers_are_killed_side_by_side(monkeypatch):
    """Stopping a worker waits for its death; those a batch abandons are all killed
    before it waits for any, so 64 die in the time of one, not of 64."""
    from convcheck.sandbox import processes

    events = []
    kill, stop = processes.Child.kill, processes.Child.stop
    monkeypatch.setattr(processes.Child, "kill", lambda self: events.append("kill") or kill(self))
    monkeypatch.setattr(processes.Child, "stop", lambda self: events.append("stop") or stop(self))
    with WorkerPool(SPEC, jobs=3, timeout=3600.0) as pool:
        sleeping = [{"op": "sleep", "seconds": 3600}] * 3
        assert pool.run(sleeping, deadline=time.monotonic() + 1.0) == [None] * 3
        assert events[:3] == ["kill"] * 3, events
