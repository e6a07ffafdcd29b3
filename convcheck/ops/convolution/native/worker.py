"""Convolution's Python worker: the native judge's worker side for convolution's ABI,
inside a sandbox worker process.

``init(config)`` loads the library (``config["library"]``) and checks its ABI, and
imports what a run needs at once when ``config["eager"]``;
``handle(request)`` judges one case. A request is ``{"case": <case JSON>, "mode":
"check" | "run"}``; the answer is ``{"verdict", "check", "out_sizes", "values", "ran"}``,
plus ``"detail"`` when the verdict is ``abi-violation`` (the library's result is outside
its ABI; ``check`` names the field) or ``tool-error`` (convcheck's own code here failed:
never the kernel's crash). A non-zero status from the library is raised, so that the
sandbox reports it as the documented ``python-exception`` crash naming the status.

For ``run``, the call is checked first; if accepted and small enough (see ``RunLimits``),
every tensor gets its own heap block of exactly numel * element size bytes from the C
``malloc`` (the sanitizer's, when it is preloaded: a read one element past the end is then
a heap-buffer-overflow report), filled from ``convcheck.values.logical_values`` in the
tensor's dim order, and the library's ``convcheck_run`` computes out, which comes back in
logical order as floats.

Startup is kept light (no numpy until the first run request): a worker starts again after
every crash.

It knows convolution's ABI (``abi.py``'s structs): it is the op's ``python_worker``
(``convcheck.registry.NativeKernel``). ``worker_main.c`` does the same as a C program, for any
op through the op's call unit, which the native judge uses by default
(``NativeJudge(c_worker=True)``; tests/native/test_c_worker.py holds the two to the same
answers). This module serves where that cannot: no C compiler for a user's target, or a
judge with a handler of its own built on this one (``convcheck.ops.convolution.executorch_source``).
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable

from convcheck.errors import ConvcheckError
from convcheck.native.library import load_library
from convcheck.native.limits import RunLimits
from convcheck.ops.convolution.native import abi


class _State:
    """The worker's: set by ``init``, before any request."""

    lib: ctypes.CDLL
    check_entry: Callable[..., int]
    run_entry: Callable[..., int]
    builder: abi.CallBuilder
    result: abi.Result
    limits = RunLimits()
    libc: ctypes.CDLL


_state = _State()


def init(config: dict) -> None:
    lib = load_library(
        config["library"],
        config.get("what", "target"),
        abi.SYMBOLS,
        "convcheck_abi.h",
        abi.ABI_VERSION,
    )
    abi.declare(lib)
    _state.lib = lib
    _state.check_entry = lib.convcheck_check
    _state.run_entry = lib.convcheck_run
    _state.builder = abi.CallBuilder()
    _state.result = abi.Result()
    _state.limits = RunLimits(**config.get("limits", {}))
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.restype = None
    libc.free.argtypes = [ctypes.c_void_p]
    _state.libc = libc
    if config.get("eager"):
        # A fork server's: the workers it forks inherit numpy, where each would import it
        # (a fifth of a second under ASan) on its first run request.
        from convcheck.native import buffers  # noqa: F401


class _Status(ConvcheckError):
    """The library returned a non-zero status: its answer, not convcheck's failure."""


def handle(request: dict) -> dict:
    try:
        return _handle(request)
    except _Status:
        raise
    except Exception as exc:
        return _unjudged("tool-error", None, f"{type(exc).__name__}: {exc}"[:300])


def _handle(request: dict) -> dict:
    mode = request.get("mode", "check")
    if mode not in ("check", "run"):
        raise ConvcheckError(f"mode: expected 'check' or 'run', got {mode!r}")
    case = request["case"]
    call = _state.builder.fill(case)
    result = _state.result
    status = _state.check_entry(ctypes.byref(call), ctypes.byref(result))
    if status != 0:
        raise _Status(f"convcheck_check returned {status} ({_check_id(result)})")
    answer = _answer(result)
    if mode == "check" or answer["verdict"] != "accept":
        return answer
    if not _small_enough(case, answer["out_sizes"]):
        return answer
    return _run(case, call, answer["out_sizes"])


def _answer(result: abi.Result) -> dict:
    broken = abi.violation(result)
    if broken is not None:
        return _unjudged("abi-violation", *broken)
    if result.accepted:
        sizes = list(result.out_sizes[: result.out_rank])
        return {
            "verdict": "accept",
            "check": None,
            "out_sizes": sizes,
            "values": None,
            "ran": False,
        }
    return {
        "verdict": "reject",
        "check": _check_id(result),
        "out_sizes": None,
        "values": None,
        "ran": False,
    }


def _unjudged(verdict: str, field: str | None, detail: str) -> dict:
    return {
        "verdict": verdict,
        "check": field,
        "out_sizes": None,
        "values": None,
        "ran": False,
        "detail": detail,
    }


def _check_id(result: abi.Result) -> str:
    return result.check.decode(errors="replace")


def _numel(sizes) -> int:
    n = 1
    for s in sizes:
        n *= s
    return n


def _small_enough(case: dict, out_sizes: list[int]) -> bool:
    limits = _state.limits
    tensors = [case["input"]["sizes"], case["weight"]["sizes"], out_sizes]
    if case["bias"] is not None:
        tensors.append(case["bias"]["sizes"])
    if any(_numel(sizes) > limits.max_tensor_elements for sizes in tensors):
        return False
    out_numel = _numel(out_sizes)
    if out_numel > limits.max_out_elements:
        return False
    return _work(case, out_sizes) <= limits.max_work


def _work(case: dict, out_sizes: list[int]) -> int:
    """Multiply-adds of the loops (an upper bound), plus their per-element overheads."""
    in_sizes, w_sizes = case["input"]["sizes"], case["weight"]["sizes"]
    groups = max(case["groups"], 1)
    # Loop iterations, not products: an empty kernel dim still has its outer loops run.
    taps = _numel([max(k, 1) for k in w_sizes[2:]])
    in_per_group = max(in_sizes[1] // groups, 1)
    positions = _numel(in_sizes[2:]) if case["transposed"] else _numel(out_sizes[2:])
    multiply_adds = out_sizes[0] * out_sizes[1] * positions * in_per_group * taps
    return multiply_adds + _numel(out_sizes) + out_sizes[0] * groups


def _run(case: dict, call: abi.Call, out_sizes: list[int]) -> dict:
    from convcheck.native import buffers  # numpy: only once a run needs it

    libc = _state.libc
    blocks: list[int] = []
    try:
        call.input.data = buffers.filled_block(libc, blocks, case["input"], "input")
        call.weight.data = buffers.filled_block(libc, blocks, case["weight"], "weight")
        if case["bias"] is not None:
            call.bias.data = buffers.filled_block(libc, blocks, case["bias"], "bias")
        # Resized to another rank, out has no declared order to lay it out by (and its
        # values are not read: its sizes already tell the judges).
        resized = len(out_sizes) != len(case["out"]["sizes"])
        out_spec = dict(case["out"], sizes=out_sizes, **({"dim_order": None} if resized else {}))
        call.out.data = buffers.empty_block(libc, blocks, out_spec)
        result = _state.result
        status = _state.run_entry(ctypes.byref(call), ctypes.byref(result))
        if status != 0:
            raise _Status(f"convcheck_run returned {status} ({_check_id(result)})")
        answer = _answer(result)
        if answer["verdict"] == "accept" and answer["out_sizes"] == out_sizes and not resized:
            answer["values"] = buffers.read_block(call.out.data, out_spec)
            answer["ran"] = True
        return answer
    finally:
        for block in blocks:
            libc.free(block)
        call.input.data = call.weight.data = call.bias.data = call.out.data = None
