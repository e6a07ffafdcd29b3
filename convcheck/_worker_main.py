"""A sandbox worker process: serves one ``WorkerSpec`` until its request pipe closes.

``convcheck.sandbox`` starts this file by path, as
``python -u _worker_main.py REQUEST_FD RESULT_FD PARENT_PID``. By path, not with ``-m``:
``-m`` would import the ``convcheck`` package first, and a worker is started again after
every crash, so anything imported before the handler's own module is paid per crash.

Protocol, over two pipes that are never stdout or stderr (the code under test may print).
Before it loads anything, the worker moves both pipes to random descriptors far above the
ones a process inherits or opens first, so a library that writes to "its" fd 3..31 (or
closes them) cannot reach the results:

* parent to worker: one JSON line to start (``path``, ``handler``, ``init``, ``config``,
  ``memory_limit_mb``, ``faulthandler``), then one JSON line per request;
* worker to parent: ``S`` once started, or ``F<message>`` if start-up failed; then one
  line per request, written as soon as it is done: ``R<json>`` (the handler's dict) or
  ``E<json>`` (the handler raised: ``{"site": ..., "report": ...}``).

stdout and stderr are one temporary file owned by the parent, emptied before each
request, so after a crash it holds what the crashing request printed.
"""

import os
import sys

# Run by path, so sys.path[0] is the convcheck directory (unless PYTHONSAFEPATH is set):
# drop it before importing more, or a module there (a convcheck/types.py, say) would
# shadow the stdlib. os and sys were loaded at start-up, before that could happen.
if os.path.realpath(sys.path[0]) == os.path.dirname(os.path.realpath(__file__)):
    sys.path.pop(0)

import ctypes
import faulthandler
import fcntl
import importlib
import json
import resource
import signal

_PR_SET_PDEATHSIG = 1
_PRIVATE_FD_LOW = 256  # above what a process inherits or opens first
_PRIVATE_FD_TOP = 4096
_REPORT_LIMIT = 8192
_SITE_LIMIT = 200


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
        _write(result_fd, b"F" + _one_line(exc).encode(errors="replace") + b"\n")
        sys.exit(1)
    _write(result_fd, b"S\n")
    _serve(handler, requests, result_fd)


def _die_with_parent(parent_pid: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    # The parent may have died before prctl took effect.
    if os.getppid() != parent_pid:
        sys.exit(1)


def private_fd(fd: int) -> int:
    """``fd`` moved to a random descriptor in [256, 4096) (close-on-exec), the original closed.

    Where the descriptor limit is lower, as high as it allows.
    """
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    top = _PRIVATE_FD_TOP if soft == resource.RLIM_INFINITY else min(soft, _PRIVATE_FD_TOP)
    low = min(_PRIVATE_FD_LOW, top // 2)
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


def _serve(handler, requests, result_fd: int) -> None:
    loads, dumps = json.loads, json.dumps
    for line in requests:
        _empty_output()
        try:
            result = handler(loads(line))
            if not isinstance(result, dict):
                raise TypeError(f"handler returned {type(result).__name__}, not dict")
            out = b"R" + dumps(result).encode() + b"\n"
        except Exception as exc:
            failure = {"site": _one_line(exc), "report": _exception_report()}
            out = b"E" + dumps(failure).encode() + b"\n"
        _write(result_fd, out)


def _empty_output() -> None:
    # One syscall when the last request printed nothing, which is the usual case.
    if os.lseek(2, 0, os.SEEK_CUR):
        os.ftruncate(2, 0)
        os.lseek(2, 0, os.SEEK_SET)


def _exception_report() -> str:
    import traceback  # only on this path: it is not cheap, and a worker starts often

    end = os.lseek(2, 0, os.SEEK_CUR)
    start = max(0, end - _REPORT_LIMIT)
    printed = os.pread(2, end - start, start).decode(errors="replace")
    return (printed + traceback.format_exc())[-_REPORT_LIMIT:]


def _one_line(exc: BaseException) -> str:
    message = str(exc).strip().splitlines()
    text = f"{type(exc).__name__}: {message[0]}" if message else type(exc).__name__
    return text[:_SITE_LIMIT]


def _write(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


if __name__ == "__main__":
    main()
