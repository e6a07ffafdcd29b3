"""Handlers for the sandbox tests; they run inside worker processes.

``handle`` does what ``request["op"]`` names, so one pool can be given a mixed batch.
``native`` calls into the tiny C library that ``test_sandbox`` builds with sanitizers.
"""

import ctypes
import os
import resource
import signal
import sys
import time

_libc = ctypes.CDLL(None)
_libc.malloc.restype = ctypes.c_void_p
_libc.malloc.argtypes = [ctypes.c_size_t]
_libc.free.argtypes = [ctypes.c_void_p]


def _kill(signum: int) -> dict:
    os.kill(os.getpid(), signum)
    time.sleep(60)  # never reached: the signal is fatal
    return {}


def _print_and_segv(text: str) -> dict:
    print(text, file=sys.stderr)
    return _kill(signal.SIGSEGV)


def _raise(message: str) -> dict:
    raise ValueError(message)


def _malloc(megabytes: int) -> dict:
    # C code under a memory limit: malloc says NULL rather than failing later.
    pointer = _libc.malloc(megabytes << 20)
    _libc.free(pointer)
    return {"null": pointer is None}


def _scribble() -> dict:
    """Garbage to every pipe this process may write to but stdout/stderr: the result pipe
    too, wherever the worker put it."""
    import fcntl
    import stat

    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        try:
            if fd > 2 and stat.S_ISFIFO(os.fstat(fd).st_mode):
                if fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY:
                    os.write(fd, b"not a result\n")
        except OSError:
            continue  # closed meanwhile (the listing's own fd)
    return {"scribbled": True}


_OPS = {
    "echo": lambda request: request,
    "pid": lambda request: time.sleep(request.get("sleep", 0)) or {"pid": os.getpid()},
    "segv": lambda request: _kill(signal.SIGSEGV),
    "fpe": lambda request: _kill(signal.SIGFPE),
    "sleep": lambda request: time.sleep(request["seconds"]) or {"slept": request["seconds"]},
    "raise": lambda request: _raise(request["message"]),
    "null": lambda request: {"bytes": ctypes.string_at(0).hex()},  # strlen(NULL)
    "alloc": lambda request: {"length": len(bytearray(request["megabytes"] << 20))},
    "malloc": lambda request: _malloc(request["megabytes"]),
    "limit": lambda request: {"as": resource.getrlimit(resource.RLIMIT_AS)[0]},
    "exit": lambda request: os._exit(request["status"]),
    "print": lambda request: print(request["text"], file=sys.stderr) or {},
    "print_and_segv": lambda request: _print_and_segv(request["text"]),
    "list": lambda request: [request],
    "scribble": lambda request: _scribble(),
    "identity": lambda request: _identity(),
}


def _identity() -> dict:
    """This process's pid, and its marker as its descendants would see it."""
    with open("/proc/self/environ", "rb") as environ:
        for entry in environ.read().split(b"\0"):
            name, _, value = entry.partition(b"=")
            if name == b"CONVCHECK_SANDBOX_WORKER":
                return {"pid": os.getpid(), "marker": value.decode()}
    return {"pid": os.getpid(), "marker": None}


def handle(request: dict) -> dict:
    return _OPS[request["op"]](request)


def init_raises(config: dict) -> None:
    raise RuntimeError(config["message"])


def init_segv(config: dict) -> None:
    os.kill(os.getpid(), signal.SIGSEGV)


def init_thread(config: dict) -> None:
    import threading

    threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()


_native = None


def init_native(config: dict) -> None:
    global _native
    _native = ctypes.CDLL(config["lib"])
    for name in ("scaled_size", "divide"):
        getattr(_native, name).restype = ctypes.c_int64
        getattr(_native, name).argtypes = [ctypes.c_int64, ctypes.c_int64]
    _native.read_bias.restype = ctypes.c_int32
    _native.read_bias.argtypes = [ctypes.c_int32, ctypes.c_int32]
    _native.grab.restype = ctypes.c_int
    _native.grab.argtypes = [ctypes.c_size_t]
    _native.call_null.restype = ctypes.c_int
    _native.touch.restype = ctypes.c_int
    _native.touch.argtypes = [ctypes.c_int]


def native(request: dict) -> dict:
    function = getattr(_native, request["function"])
    return {"value": function(*request["args"])}
