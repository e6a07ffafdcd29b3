"""A sandbox worker process: serves one ``WorkerSpec`` until its request pipe closes.

``convcheck.sandbox`` starts this file by path, as
``python -u _worker_main.py REQUEST_FD RESULT_FD PARENT_PID``. By path, not with ``-m``:
``-m`` would import the ``convcheck`` package first, and a worker is started again after
every crash, so anything imported before the handler's own module is paid per crash.

The protocol is ``convcheck/sandbox/protocol.py``'s, loaded by its path (this runs before
``sys.path`` is the parent's), over two pipes that are never stdout or stderr (the code
under test may print). Before it loads anything else, the worker moves both pipes to random
descriptors far above the ones a process inherits or opens first, so a library that writes
to "its" fd 3..31 (or closes them) cannot reach the results:

* parent to worker: one JSON line to start (``path``, ``handler``, ``init``, ``config``,
  ``memory_limit_mb``, ``faulthandler``, ``fork_server``, ``marker``), then one JSON line
  per request;
* worker to parent: ``STARTED``, or ``START_FAILED`` and why; then one line per request,
  written as soon as it is done: ``RESULT`` and the handler's dict as JSON, or ``ERROR``
  and ``{"site": ..., "report": ...}`` (the handler raised).

stdout and stderr are one temporary file owned by the parent, emptied before each
request, so after a crash it holds what the crashing request printed.

A fork server (``fork_server`` true; ``marker`` names the environment variable that tells
a worker's descendants apart) serves no requests: its request fd is a Unix socket on which
each ``FORK`` message carries three descriptors (a new worker's request pipe, result pipe
and output file). For each, it forks a worker that already has the handler's module and
the library loaded, so a crash costs a fork, not a start. The worker is forked with
CLONE_PARENT, so that it is the parent's own child, not the server's: the parent reaps it,
kills it and sees its exit status as it does for a started one. The server answers on its
result pipe ``FORKED`` and the pid, or ``FORK_REFUSED`` and why when forking is not safe
(see ``_fork_hazard``); the parent then starts workers instead.
"""

import os
import sys

# Run by path, so sys.path[0] is the convcheck directory (unless PYTHONSAFEPATH is set):
# drop it before importing more, or a module there (a convcheck/types.py, say) would
# shadow the stdlib. os and sys were loaded at start-up, before that could happen.
if os.path.realpath(sys.path[0]) == os.path.dirname(os.path.realpath(__file__)):
    sys.path.pop(0)

import contextlib
import ctypes
import faulthandler
import fcntl
import gc
import importlib
import importlib.util
import json
import resource
import signal


def _protocol():
    # By path: importing convcheck.sandbox.protocol would import the package first. A
    # PyInstaller bundle (how OSS-Fuzz ships a harness) keeps no source file to load,
    # only its archive: there the module is imported.
    path = os.path.join(os.path.dirname(os.path.realpath(__file__)), "sandbox", "protocol.py")
    if not os.path.exists(path):
        return importlib.import_module("convcheck.sandbox.protocol")
    spec = importlib.util.spec_from_file_location("convcheck.sandbox.protocol", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


protocol = _protocol()
_PR_SET_PDEATHSIG = 1
# Runtimes whose symbolizer can be warmed. Not gcc's libubsan: its symbolizer, set up by
# a call before its first report, stays without function names for good.
_SANITIZER_RUNTIMES = ("libasan", "libclang_rt.asan")


def main() -> None:
    request_fd, result_fd, parent_pid = (int(arg) for arg in sys.argv[1:4])
    _die_with_parent(parent_pid)
    request_fd, result_fd = private_fd(request_fd), private_fd(result_fd)
    requests = os.fdopen(request_fd, "rb")
    start = json.loads(requests.readline())
    sys.path[:] = start["path"]
    if start["memory_limit_mb"] is not None:
        limit = start["memory_limit_mb"] << 20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    if start["faulthandler"]:
        # A Python traceback in the crash report; left off under ASan, whose own report
        # needs the original fault, not faulthandler's re-raise.
        faulthandler.enable()
    try:
        handler = _load(start["handler"])
        if start["init"] is not None:
            _load(start["init"])(start["config"])
    except Exception as exc:
        _write_line(result_fd, protocol.START_FAILED, _one_line(exc).encode(errors="replace"))
        sys.exit(1)
    _write_line(result_fd, protocol.STARTED)
    if start.get("fork_server"):
        _fork_forever(requests, result_fd, handler, parent_pid, start["marker"])
    else:
        _serve(handler, requests, result_fd)


def _libc():
    """The C library, opened once: a forked worker must not call dlopen, which makes ASan
    forget the modules it knows (and read them again, for its report, in every worker)."""
    global _LIBC
    if _LIBC is None:
        _LIBC = ctypes.CDLL(None, use_errno=True)
        _LIBC.getenv.restype = ctypes.c_void_p
    return _LIBC


_LIBC = None


def _die_with_parent(parent_pid: int) -> None:
    libc = _libc()
    if libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    # The parent may have died before prctl took effect.
    if os.getppid() != parent_pid:
        sys.exit(1)


def private_fd(fd: int) -> int:
    """``fd`` moved to a random descriptor in [``PRIVATE_FD_LOW``, ``PRIVATE_FD_TOP``)
    (close-on-exec), the original closed.

    Where the descriptor limit is lower, as high as it allows.
    """
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    top = protocol.PRIVATE_FD_TOP
    top = top if soft == resource.RLIM_INFINITY else min(soft, top)
    low = min(protocol.PRIVATE_FD_LOW, top // 2)
    start = low + int.from_bytes(os.urandom(4), "little") % (top - low)
    try:
        moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, start)
    except OSError:  # EMFILE/EINVAL: nothing free from start up to the limit
        moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, low)
    os.close(fd)
    return moved


def _load(name: str):
    module, _, attribute = name.partition(":")
    target = importlib.import_module(module)
    for part in attribute.split("."):
        target = getattr(target, part)
    return target


def _fork_forever(control, result_fd: int, handler, parent_pid: int, marker: str) -> None:
    import socket

    server = socket.socket(fileno=os.dup(control.fileno()))
    control.close()
    fork = _SiblingFork()
    _shrink()
    _warm_symbolizers()  # last: a dlopen (ctypes.CDLL) would undo it
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(server, 16, 3)
        except OSError:
            message, fds = b"", []
        if not message:  # the parent closed the socket: the pool is done with us
            os._exit(0)
        unsafe = _fork_hazard() or fork.hazard
        if unsafe or len(fds) != 3:
            for fd in fds:
                os.close(fd)
            refusal = (unsafe or "not three descriptors").encode()
            _write_line(result_fd, protocol.FORK_REFUSED, refusal)
            continue
        try:
            pid = fork()
        except OSError as exc:  # a seccomp filter, say: it will not change
            fork.hazard = f"clone: {exc.strerror}"
            pid = None
        if pid == 0:
            _forked_worker(server, result_fd, fds, handler, parent_pid, marker)
        for fd in fds:
            os.close(fd)
        if pid:
            _write_line(result_fd, protocol.FORKED, b"%d" % pid)
        else:
            _write_line(result_fd, protocol.FORK_REFUSED, fork.hazard.encode())


class _SiblingFork:
    """``os.fork`` with CLONE_PARENT: the child is this process's sibling, the parent's
    own child, in one fork.

    Forking twice (a go-between that forks the worker and exits, orphaning it to the
    parent, a subreaper) copies this process twice: under ASan, with its page tables
    spread over the shadow and the allocator's regions, that was most of a crash's cost.
    glibc's fork() takes no flags, so this is the clone system call with what fork() and
    ``os.fork`` do around it: the interpreter's before and after hooks, and the child's
    thread id in its thread descriptor (CLONE_CHILD_SETTID), which glibc's locks read.
    ``hazard`` says why it cannot be done here, or is "".
    """

    _CLONE_PARENT = 0x00008000
    _CLONE_CHILD_SETTID = 0x01000000
    # The child's thread id goes in both the fourth and the fifth argument: architectures
    # differ on which is child_tid, and the other (tls) is read only with CLONE_SETTLS.
    _SYS_CLONE = {"x86_64": 56, "aarch64": 220, "riscv64": 220, "ppc64le": 120}
    _SCAN_BYTES = 2048  # of the thread descriptor, where glibc and musl keep the thread id

    def __init__(self) -> None:
        import threading

        self.api = ctypes.PyDLL(None, use_errno=True)  # called holding the GIL, as os.fork is
        self.number = self._SYS_CLONE.get(os.uname().machine)
        self.api.pthread_self.restype = ctypes.c_void_p
        me, tid = self.api.pthread_self(), threading.get_native_id()
        found = [
            me + at
            for at in range(0, self._SCAN_BYTES, 4)
            if ctypes.c_int.from_address(me + at).value == tid
        ]
        if self.number is None:
            self.hazard = f"no clone system call known for {os.uname().machine}"
        elif len(found) != 1:
            self.hazard = "the thread id is not found in the thread descriptor"
        else:
            self.hazard = ""
        self.tid_address = found[0] if found else None
        self.api.syscall.restype = ctypes.c_long
        self.api.syscall.argtypes = [ctypes.c_long] + [ctypes.c_void_p] * 5

    def __call__(self) -> int:
        flags = self._CLONE_PARENT | self._CLONE_CHILD_SETTID | signal.SIGCHLD
        tid = ctypes.c_void_p(self.tid_address)
        ctypes.pythonapi.PyOS_BeforeFork()
        pid = self.api.syscall(self.number, flags, None, None, tid, tid)
        if pid == 0:
            ctypes.pythonapi.PyOS_AfterFork_Child()
            return 0
        ctypes.pythonapi.PyOS_AfterFork_Parent()
        if pid < 0:
            raise OSError(ctypes.get_errno(), "clone(CLONE_PARENT) failed")
        return pid


def _fork_hazard() -> str:
    """Why forking this process is unsafe, or "": a second thread (fork copies only this
    one, and a lock the other held stays locked in the child), or a child process (a
    sanitizer's symbolizer: every forked worker would share its pipes)."""
    tasks = os.listdir("/proc/self/task")
    if len(tasks) != 1:
        return f"{len(tasks)} threads"
    with open(f"/proc/self/task/{tasks[0]}/children") as children:
        if children.read().split():
            return "a child process"
    return ""


def _warm_symbolizers() -> None:
    """Have the sanitizer runtimes loaded read this process's modules (and ASan's, their
    debug information) now: each forked worker inherits that, where it would otherwise
    spend most of a crash (a quarter of a second) reading them again for its report's
    stack. (A runtime that symbolizes with a helper process would leave it a child of the
    server: the server then refuses to fork, see ``_fork_forever``.)"""
    runtimes: tuple[str, ...] = _SANITIZER_RUNTIMES
    if _option("UBSAN_OPTIONS", "symbolize") == "0":
        # Without names, gcc's UBSan only maps addresses to modules: warmed, its first
        # report in a worker no longer sets up its allocator and reads /proc/self/maps.
        runtimes += ("libubsan",)
    functions = []
    for path in _loaded(runtimes):  # all opened first: each dlopen undoes what came before
        with contextlib.suppress(OSError, AttributeError):
            functions.append(ctypes.CDLL(path, mode=os.RTLD_NOLOAD).__sanitizer_symbolize_pc)
    for symbolize in functions:
        symbolize.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
        symbolize.restype = None
        answer = ctypes.create_string_buffer(256)
        symbolize(ctypes.cast(symbolize, ctypes.c_void_p), b"%p %F %L", answer, len(answer))


def _loaded(prefixes: tuple[str, ...]) -> list[str]:
    """The paths of the loaded modules whose file names start with one of ``prefixes``."""
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if "/" in line}
    return sorted(path for path in paths if os.path.basename(path).startswith(prefixes))


def _option(variable: str, name: str) -> str | None:
    """The value a sanitizer reads for option ``name`` from ``variable`` (the last one)."""
    value = None
    for option in os.environ.get(variable, "").replace(",", ":").split(":"):
        key, _, given = option.strip().partition("=")
        if key == name:
            value = given
    return value


def _shrink() -> None:
    """Make this process cheaper to fork, once it will not grow any more.

    Forking copies the page tables of the memory a process has written, and each worker
    copies again the pages it writes: under ASan, the quarantine holds every block the
    imports freed (up to 256 MB, dirty), and the garbage collector would write to every
    object it visits in each worker. ASan's purge empties the quarantine into its
    allocator and returns the free pages; gc.freeze leaves the objects there to stay."""
    gc.collect()
    gc.freeze()
    for path in _loaded(("libasan", "libclang_rt.asan")):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(path, mode=os.RTLD_NOLOAD).__sanitizer_purge_allocator()


def _forked_worker(server, server_result_fd: int, fds, handler, parent_pid, marker: str):
    """A worker forked by the server: set up as a started one would be, serve, exit."""
    status = 1
    try:
        os.setsid()
        server.close()
        os.close(server_result_fd)
        request_fd, result_fd, output_fd = fds
        os.dup2(output_fd, 1)
        os.dup2(output_fd, 2)
        os.close(output_fd)
        request_fd, result_fd = private_fd(request_fd), private_fd(result_fd)
        _rename_marker(marker, f"{os.getpid():010d}")
        _die_with_parent(parent_pid)
        _write_line(result_fd, protocol.STARTED)
        _serve(handler, os.fdopen(request_fd, "rb"), result_fd)
        status = 0
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        os._exit(status)


def _rename_marker(name: str, suffix: str) -> None:
    """Give this process a marker of its own, in place.

    The parent tells a worker's orphans apart by the marker in /proc/PID/environ, which
    shows the environment block the process was exec'd with: a forked worker shares the
    server's, so it overwrites the suffix there with one of the same length.
    """
    address = _libc().getenv(name.encode())
    value = ctypes.string_at(address)
    base, _, old = value.rpartition(b".")
    assert len(old) == len(suffix), (value, suffix)
    ctypes.memmove(address + len(base) + 1, suffix.encode(), len(suffix))
    os.environ[name] = (base + b"." + suffix.encode()).decode()


def _serve(handler, requests, result_fd: int) -> None:
    loads, dumps = json.loads, json.dumps
    for line in requests:
        _empty_output()
        try:
            result = handler(loads(line))
            if not isinstance(result, dict):
                raise TypeError(f"handler returned {type(result).__name__}, not dict")
            kind, message = protocol.RESULT, dumps(result)
        except Exception as exc:
            kind = protocol.ERROR
            message = dumps({"site": _one_line(exc), "report": _exception_report()})
        _write_line(result_fd, kind, message.encode())


def _empty_output() -> None:
    # One syscall when the last request printed nothing, which is the usual case.
    if os.lseek(2, 0, os.SEEK_CUR):
        os.ftruncate(2, 0)
        os.lseek(2, 0, os.SEEK_SET)


def _exception_report() -> str:
    import traceback  # only on this path: it is not cheap, and a worker starts often

    limit = protocol.REPORT_LIMIT
    end = os.lseek(2, 0, os.SEEK_CUR)
    start = max(0, end - limit)
    printed = os.pread(2, end - start, start).decode(errors="replace")
    return (printed + traceback.format_exc())[-limit:]


def _one_line(exc: BaseException) -> str:
    message = str(exc).strip().splitlines()
    text = f"{type(exc).__name__}: {message[0]}" if message else type(exc).__name__
    return text[: protocol.SITE_LIMIT]


def _write_line(fd: int, kind: bytes, message: bytes = b"") -> None:
    view = memoryview(kind + message + protocol.END_OF_LINE)
    while view:
        view = view[os.write(fd, view) :]


if __name__ == "__main__":
    main()
