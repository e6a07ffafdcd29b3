"""The worker side of every wheel target: ExecuTorch's pybindings, loaded once per worker
process, running one crafted program at a time and keeping what it logged.

``init()`` imports torch and ExecuTorch's pybindings (``_C``; not
``executorch.runtime`` or ``executorch.exir``, which cost seconds). ``load``, ``call`` and
``execute_only`` each return the log the runtime printed meanwhile beside their result.

ExecuTorch logs on stderr (fd 2). In a sandbox worker fd 2 is a file the pool empties
before each request, so a call's log is what fd 2 gained while it ran; elsewhere fd 2 is
redirected into a temporary file around each call.
"""

from __future__ import annotations

import fcntl
import os
import stat
import tempfile
from collections.abc import Callable
from typing import IO, Any

from convcheck.case import DTYPES, TensorSpec
from convcheck.errors import ConvcheckError
from convcheck.executorch_wheel.logs import LogKind, LogVerdict, unknown_id


class StderrLog:
    """What ExecuTorch printed on fd 2 between ``begin`` and ``end``."""

    def __init__(self) -> None:
        # In place: a regular file we can read back, written at its offset (the sandbox's).
        flags = fcntl.fcntl(2, fcntl.F_GETFL)
        self.in_place = (
            stat.S_ISREG(os.fstat(2).st_mode)
            and flags & os.O_ACCMODE == os.O_RDWR
            and not flags & os.O_APPEND
        )
        self._start = 0
        self._saved = -1
        self._file: IO[bytes] | None = None

    def begin(self) -> None:
        if self.in_place:
            self._start = os.lseek(2, 0, os.SEEK_CUR)
            return
        self._file = file = tempfile.TemporaryFile()
        self._saved = os.dup(2)
        os.dup2(file.fileno(), 2)

    def end(self) -> str:
        if self.in_place:
            end = os.lseek(2, 0, os.SEEK_CUR)
            return os.pread(2, end - self._start, self._start).decode(errors="replace")
        os.dup2(self._saved, 2)
        os.close(self._saved)
        assert self._file is not None  # opened by ``begin``
        with self._file as f:
            f.seek(0)
            return f.read().decode(errors="replace")


class _State:
    """The worker's: set by ``init``, before any program runs."""

    torch: Any  # the module
    C: Any  # ExecuTorch's pybindings
    dtypes: dict[str, Any] = {}  # convcheck dtype name -> torch dtype
    log: StderrLog


_state = _State()


def init() -> None:
    import torch

    # The pybindings resolve libtorch's symbols: torch first. Imported by its own name,
    # not through executorch.extension.pybindings.portable_lib (warnings, an OpenVINO
    # search) or executorch.runtime (which imports executorch.exir: seconds).
    from executorch.extension.pybindings import _C

    torch.set_num_threads(1)
    _state.dtypes = {name: getattr(torch, name) for name in DTYPES}
    _state.torch = torch
    _state.C = _C
    _state.log = StderrLog()


def torch() -> Any:
    """The torch module ``init`` imported."""
    return _state.torch


def load(pte: bytes):
    """``(method, log, None)``, or ``(None, log, error)`` when the program does not load."""
    log = _state.log
    log.begin()
    try:
        method = _state.C._load_program_from_buffer(pte).load_method("forward")
    except RuntimeError as exc:
        return None, log.end(), str(exc)
    return method, log.end(), None


def call(method, inputs: list):
    """``(outputs, log, None)``, or ``(None, log, error)`` when the call fails."""
    log = _state.log
    log.begin()
    try:
        outputs = method(inputs)
    except RuntimeError as exc:
        return None, log.end(), str(exc)
    return outputs, log.end(), None


def execute_only(method) -> tuple[str, str | None]:
    """Runs a program without inputs and without reading its outputs back (the
    pybindings abort converting an out whose strides overflow): ``(log, error or None)``."""
    log = _state.log
    log.begin()
    try:
        method.set_inputs([])
        method.execute()
    except RuntimeError as exc:
        return log.end(), str(exc)
    return log.end(), None


def _tensor(stored):
    """A contiguous torch tensor over numpy storage (bfloat16 stored as its bits)."""
    flat = _state.torch.from_numpy(stored.reshape(-1))
    return flat.view(_state.torch.bfloat16) if stored.dtype.name == "uint16" else flat


def input_tensor(spec: TensorSpec, logical):
    """The tensor ``set_inputs`` copies byte for byte into the planned tensor: its bytes
    are ``logical`` (float64 values of ``spec.sizes``) laid out in ``spec``'s dim order;
    its sizes are the logical ones (the runtime checks them), its strides contiguous (the
    pybindings require it)."""
    from convcheck.native.buffers import physical, to_storage

    if spec.numel == 0:
        # numpy refuses an empty array whose other dims multiply past its limits.
        return _state.torch.empty(spec.sizes, dtype=_state.dtypes[spec.dtype])
    stored = physical(to_storage(logical, spec.dtype), spec.order)
    return _tensor(stored).reshape(spec.sizes)


def filled(dtype: str, length: int, value: float):
    """A 1-D tensor of ``length`` elements of ``value`` in ``dtype``."""
    import numpy as np

    from convcheck.native.buffers import to_storage

    return _tensor(to_storage(np.full(length, value), dtype))


def as_floats(tensor) -> list[float]:
    """A tensor's values in logical (row-major) order, as Python floats."""
    return tensor.to(_state.torch.float64).reshape(-1).tolist()


# -- answers -----------------------------------------------------------------------------
# A worker answers ``{"verdict", "check", "out_sizes", "values", "crash", "detail",
# "form"}``: "form" says how the case ran (whole, or probed for its checks).

WHOLE, PROBE, PROBE_STATIC = "whole", "probe", "probe-static"


def answer(verdict: str, form: str, **fields) -> dict:
    said = {
        "verdict": verdict,
        "check": None,
        "out_sizes": None,
        "values": None,
        "crash": None,
        "detail": "",
        "form": form,
    }
    said.update(fields)
    return said


def rejected(verdict: LogVerdict, form: str) -> dict:
    """The answer for a failed execution whose log is neither probe's resize."""
    check = verdict.check if verdict.kind == LogKind.REJECT else unknown_id(verdict.line)
    return answer("reject", form, check=check, detail=verdict.line)


def probe(programs: Callable[[str], bytes], classify: Callable[[str], LogVerdict]) -> dict:
    """The checks, up to the resize of out; then the sizes the kernel computed for it.

    ``programs(form)`` is the case's program without data: its out of capacity 0
    (``PROBE``), or static of sizes 0 (``PROBE_STATIC``). First the former: a check that fails
    says so, and a resize that fails for room (or succeeds: an empty out) means every
    check before it passed. Then the latter: its resize fails and logs the sizes asked
    for. The out tensor is never read back.
    """
    method, log, error = load(programs(PROBE))
    if method is not None:
        log, error = execute_only(method)
    if error is not None:
        verdict = classify(log or error)
        if verdict.kind != LogKind.CAPACITY:
            return rejected(verdict, PROBE)
    method, log, error = load(programs(PROBE_STATIC))
    if method is not None:
        log, error = execute_only(method)
    static = classify(log or error or "")
    if static.kind != LogKind.STATIC:
        raise ConvcheckError(f"probe of the out sizes: expected a static resize, got {static}")
    assert static.sizes is not None  # a STATIC verdict holds them
    detail = "probe: checks and out sizes only (too large to run whole)"
    return answer("accept", PROBE, out_sizes=list(static.sizes), detail=detail)


def run_whole(
    pte: bytes, inputs: list, classify: Callable[[str], LogVerdict], fallback: Callable[[], dict]
) -> tuple[Any, list] | dict:
    """``(method, outputs)`` when the program runs (the method to call again), else the
    answer. A run whose out lacks the room for what the kernel computed (the model said
    less) answers with ``fallback()``, the probe that learns the sizes."""
    method, log, error = load(pte)
    if method is None:
        return rejected(classify(log or error), WHOLE)
    outputs, log, error = call(method, inputs)
    if error is None:
        return method, outputs
    verdict = classify(log or error)
    if verdict.kind != LogKind.CAPACITY:
        return rejected(verdict, WHOLE)
    said = fallback()
    said["detail"] = f"not run: {verdict.line}; {said['detail']}"
    return said


def judge(
    programs: Callable[[str], bytes],
    whole: bool,
    inputs: Callable[[], list],
    classify: Callable[[str], LogVerdict],
    max_values: int | None,
) -> dict:
    """One case of an op whose outputs come back as the program's: run whole (``inputs()``
    its input tensors), or probed. An accepted whole run answers with out's sizes, and
    with every output's values, out's first, where ``max_values`` is given and out has
    at most that many elements."""

    def probed() -> dict:
        return probe(programs, classify)

    if not whole:
        return probed()
    ran = run_whole(programs(WHOLE), inputs(), classify, probed)
    if isinstance(ran, dict):
        return ran
    _, outputs = ran
    values = None
    if max_values is not None and outputs[0].numel() <= max_values:
        values = [v for tensor in outputs for v in as_floats(tensor)]
    return answer("accept", WHOLE, out_sizes=list(outputs[0].shape), values=values)
