"""The worker side of the ExecuTorch judge: runs inside a sandbox worker process.

``init(config)`` imports torch and ExecuTorch's pybindings (``_C``; not
``executorch.runtime`` or ``executorch.exir``, which cost seconds); ``handle(request)``
judges one case. A request is ``{"case": <case JSON>, "mode": "check" | "run"}``; the
answer is ``{"verdict", "check", "out_sizes", "values", "crash", "detail", "form"}``.

Per case: a program is crafted (``_craft.py``), loaded from bytes and called. A whole run
gets deterministic inputs (``convcheck.values.logical_values``, laid out by dim order);
when it accepts and the plan put a canary after the bias, it runs once more with other
canary values: if out changes, the kernel read past the bias ("bias-overread (values)":
the pip build has no sanitizer to say so). A probe (too large to run whole) reports the
checks up to the out resize. A process-killing case (SIGFPE, SIGSEGV, abort) is left to
kill the worker: the sandbox turns that into a crash.

ExecuTorch logs on stderr (fd 2). In a sandbox worker fd 2 is a file the pool empties
before each request, so a case's log is what fd 2 gained while it ran; elsewhere fd 2 is
redirected into a temporary file around each call.
"""

from __future__ import annotations

import fcntl
import os
import stat
import tempfile
from typing import IO, Any

from convcheck.case import TensorSpec
from convcheck.errors import ConvcheckError
from convcheck.ops.convolution.case import ConvolutionCase
from convcheck.ops.convolution.executorch_target import logs
from convcheck.ops.convolution.executorch_target._craft import PROBE, PROBE_STATIC, WHOLE, program
from convcheck.ops.convolution.executorch_target._plan import Limits, Plan, make_plan

OVERREAD_KIND = "bias-overread (values)"
# The two canary fillings: any difference between the two runs' outputs was read from
# them. 100 is exact in every dtype (uint8 and bfloat16 included) and stays visible after
# conversion to the compute dtype.
_CANARY_VALUES = (0.0, 100.0)
_DTYPES: tuple[str, ...] = (
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "float32",
    "float64",
)
_DTYPES += ("bool", "bfloat16")


class _State:
    """The worker's: set by ``init``, before any request."""

    torch: Any  # the module, imported by ``init``
    C: Any  # ExecuTorch's pybindings
    dtypes: dict[str, Any] = {}  # convcheck dtype name -> torch dtype
    limits = Limits()
    log: StderrLog


_state = _State()


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


def init(config: dict) -> None:
    import torch

    # The pybindings resolve libtorch's symbols: torch first. Imported by its own name,
    # not through executorch.extension.pybindings.portable_lib (warnings, an OpenVINO
    # search) or executorch.runtime (which imports executorch.exir: seconds).
    from executorch.extension.pybindings import _C

    torch.set_num_threads(1)
    _state.dtypes = {name: getattr(torch, name) for name in _DTYPES}
    _state.torch = torch
    _state.C = _C
    _state.limits = Limits(**config.get("limits", {}))
    _state.log = StderrLog()


def handle(request: dict) -> dict:
    mode = request.get("mode", "check")
    if mode not in ("check", "run"):
        raise ConvcheckError(f"mode: expected 'check' or 'run', got {mode!r}")
    case = ConvolutionCase.from_json(request["case"])
    plan = make_plan(case, _state.limits)
    if plan.whole:
        return _whole(case, plan, want_values=mode == "run")
    return _probe(case, plan)


# -- answers -----------------------------------------------------------------------------


def _answer(verdict: str, form: str, **fields) -> dict:
    answer = {
        "verdict": verdict,
        "check": None,
        "out_sizes": None,
        "values": None,
        "crash": None,
        "detail": "",
        "form": form,
    }
    answer.update(fields)
    return answer


def _from_log(verdict: logs.LogVerdict, form: str) -> dict:
    if verdict.kind == logs.LogKind.REJECT:
        return _answer("reject", form, check=verdict.check, detail=verdict.line)
    return _answer("reject", form, check=logs.unknown_id(verdict.line), detail=verdict.line)


# -- running a program -------------------------------------------------------------------


def _load(pte: bytes):
    """``(method, log, None)``, or ``(None, log, error)`` when the program does not load."""
    log = _state.log
    log.begin()
    try:
        method = _state.C._load_program_from_buffer(pte).load_method("forward")
    except RuntimeError as exc:
        return None, log.end(), str(exc)
    return method, log.end(), None


def _call(method, inputs: list):
    """``(outputs, log, None)``, or ``(None, log, error)`` when the call fails."""
    log = _state.log
    log.begin()
    try:
        outputs = method(inputs)
    except RuntimeError as exc:
        return None, log.end(), str(exc)
    return outputs, log.end(), None


# -- inputs ------------------------------------------------------------------------------


def _tensor(stored):
    """A contiguous torch tensor over numpy storage (bfloat16 stored as its bits)."""
    torch = _state.torch
    flat = torch.from_numpy(stored.reshape(-1))
    return flat.view(torch.bfloat16) if stored.dtype.name == "uint16" else flat


def _input(spec: TensorSpec, role: str):
    """The tensor ``set_inputs`` copies byte for byte into the planned tensor: its bytes
    are the logical values laid out in ``spec``'s dim order; its sizes are the logical
    ones (the runtime checks them), its strides contiguous (the pybindings require it)."""
    from convcheck.native.buffers import physical, to_storage
    from convcheck.values import logical_values

    if spec.numel == 0:
        # numpy refuses an empty array whose other dims multiply past its limits.
        return _state.torch.empty(spec.sizes, dtype=_state.dtypes[spec.dtype])
    stored = physical(to_storage(logical_values(spec, role), spec.dtype), spec.order)
    return _tensor(stored).reshape(spec.sizes)


def _canary(dtype: str, length: int, value: float):
    import numpy as np

    from convcheck.native.buffers import to_storage

    return _tensor(to_storage(np.full(length, value), dtype))


# -- whole runs and probes ---------------------------------------------------------------


def _whole(case: ConvolutionCase, plan: Plan, want_values: bool) -> dict:
    pte, roles = program(case, plan, WHOLE)
    specs = {"input": case.input, "weight": case.weight}
    if case.bias is not None:  # (only then is there a "bias" role, and a "canary" after it)
        specs["bias"] = case.bias
    inputs = [
        _canary(specs["bias"].dtype, plan.canary, _CANARY_VALUES[0])
        if role == "canary"
        else _input(specs[role], role)
        for role in roles
    ]
    method, log, error = _load(pte)
    if method is None:
        return _from_log(logs.classify(log or error), WHOLE)
    outputs, log, error = _call(method, inputs)
    if error is not None:
        verdict = logs.classify(log or error)
        if verdict.kind == logs.LogKind.CAPACITY:
            # The kernel computed a larger out than the model said: learn its sizes.
            answer = _probe(case, plan)
            answer["detail"] = f"not run: {verdict.line}; {answer['detail']}"
            return answer
        return _from_log(verdict, WHOLE)
    out = outputs[0]
    sizes = list(out.shape)
    if "canary" in roles and out.numel() > 0:
        inputs[-1] = _canary(specs["bias"].dtype, plan.canary, _CANARY_VALUES[1])
        again, log, error = _call(method, inputs)
        if error is not None:
            raise ConvcheckError(f"the second run failed where the first passed: {error}")
        changed = _changed_channels(out, again[0])
        if changed:
            detail = (
                f"bias of {specs['bias'].sizes[0]} for {sizes[1]} out channels: out channels "
                f"{changed[0]}..{changed[-1]} follow the bytes after it"
            )
            return _answer(
                "crash", WHOLE, crash={"kind": OVERREAD_KIND, "site": "bias"}, detail=detail
            )
    values = None
    if want_values and out.numel() <= _state.limits.max_values:
        values = out.to(_state.torch.float64).reshape(-1).tolist()
    return _answer("accept", WHOLE, out_sizes=sizes, values=values)


def _changed_channels(first, second) -> list[int]:
    torch = _state.torch
    if torch.equal(first, second):
        return []
    differs = (first != second).transpose(0, 1).reshape(first.shape[1], -1).any(dim=1)
    return [int(i) for i in torch.nonzero(differs).flatten()]


def _probe(case: ConvolutionCase, plan: Plan) -> dict:
    """The checks, up to the out resize; then the sizes the kernel computed for out.

    First with an out of capacity 0: a check that fails says so, and a resize that fails
    for room (or succeeds: an empty out) means every check before it passed. Then with a
    static out of sizes 0: its resize fails and logs the sizes asked for. The out tensor
    is never read back (the pybindings abort converting one whose strides overflow).
    """
    method, log, error = _load(program(case, plan, PROBE)[0])
    if method is not None:
        log, error = _execute_only(method)
    if error is not None:
        verdict = logs.classify(log or error)
        if verdict.kind != logs.LogKind.CAPACITY:
            return _from_log(verdict, PROBE)
    method, log, error = _load(program(case, plan, PROBE_STATIC)[0])
    if method is not None:
        log, error = _execute_only(method)
    static = logs.classify(log or error or "")
    if static.kind != logs.LogKind.STATIC:
        raise ConvcheckError(f"probe of the out sizes: expected a static resize, got {static}")
    assert static.sizes is not None  # a STATIC verdict holds them
    detail = "probe: checks and out sizes only (too large to run whole)"
    return _answer("accept", PROBE, out_sizes=list(static.sizes), detail=detail)


def _execute_only(method) -> tuple[str, str | None]:
    log = _state.log
    log.begin()
    try:
        method.set_inputs([])
        method.execute()
    except RuntimeError as exc:
        return log.end(), str(exc)
    return log.end(), None
