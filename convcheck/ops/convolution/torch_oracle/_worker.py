"""The torch judge's worker side: real CPU ``aten.convolution`` in a process that may die.

Run by ``convcheck.sandbox`` (``init(config)`` once, then ``handle(request)`` per
request). A request carries several calls, so that the sandbox's per-request cost (a
JSON line each way, a poll) is paid once for them: ``{"calls": [call, ...], "values":
bool}``, each call ``[case, onednn, threads]`` with the case as ``encode_case`` packs it
and ``threads`` torch's intra-op threads for that call. The answer is ``{"answers":
[answer, ...]}``, one per call, in order: ``{"verdict": "accept", "sizes": [...], "dtype":
"float32", "values": "f<base64 of float32s>"}`` (``encode_values``) or ``{"verdict":
"reject", "error": "RuntimeError", "message": "..."}``. The values travel as packed bytes,
not a JSON list: printing and parsing a float each cost more than the small convolution
that made it. A case's two calls (oneDNN on, then off) run on one set of tensors when
they share a request. A torch crash kills the worker, and with it the request's other
answers. So before each call the worker prints ``MARK`` and the call's index to its
output, which the sandbox's crash report ends with: the judge reads which call crashed
(``crashed_call``) and runs the others again, without crashing a second time on the
same call.
"""

from __future__ import annotations

import base64
import os
import re
import sys
from array import array
from typing import Any

from convcheck.case import TensorSpec
from convcheck.ops.convolution.torch_oracle._torch import settings

_STATE: dict[str, Any] = {}
PARAMS = ("stride", "padding", "dilation", "transposed", "output_padding", "groups")
MARK = "convcheck-torch-call "
_MARKS = re.compile(re.escape(MARK) + r"(\d+)\n")


def init(config: dict[str, Any]) -> None:
    from convcheck.ops.convolution.torch_oracle._torch import torch_module

    torch = torch_module()  # imported, and its objects frozen out of the collector's way
    # OMP_NUM_THREADS has set it: setting it again would start OpenMP's threads here, in
    # the fork server, which forks only while it has a single thread.
    if torch.get_num_threads() != int(config["threads"]):
        torch.set_num_threads(int(config["threads"]))
    _STATE["torch"] = torch


def encode_case(case) -> list[Any]:
    """What the worker needs of a case, as plain JSON: cheaper both ways than
    ``Case.to_json``/``from_json`` (no ``out``, nothing to validate again). The
    parameters are in ``aten.convolution``'s order."""

    def spec(s: TensorSpec | None) -> list[Any] | None:
        return None if s is None else [s.sizes, s.dtype, s.order]

    return [*map(spec, (case.input, case.weight, case.bias)), *map(case.__getattribute__, PARAMS)]


def decode_values(raw: str) -> tuple[float, ...]:
    """The values ``encode_values`` packed, as Python floats (float64)."""
    values = array(raw[0], base64.b64decode(raw[1:]))
    if sys.byteorder != "little":
        values.byteswap()
    return tuple(values)


def crashed_call(report: str, calls: int) -> int | None:
    """The index of the call a crashed request was running, from its crash report."""
    found = _MARKS.findall(report)
    index = int(found[-1]) if found else None
    return index if index is not None and index < calls else None


def handle(request: dict[str, Any]) -> dict[str, Any]:
    values = bool(request["values"])
    answers = []
    # A case's oneDNN-off call follows its oneDNN-on one: both run on the same tensors,
    # made once (convolution only reads its arguments).
    made: tuple[list[Any], Any] | None = None
    for index, (case, onednn, threads) in enumerate(request["calls"]):
        os.write(2, f"{MARK}{index}\n".encode())
        if made is None or made[0] != case:
            made = (case, _tensors(case))
        answers.append(_call(made[1], case, onednn, threads, values))
    return {"answers": answers}


def _tensors(packed: list[Any]) -> list[Any] | dict[str, Any]:
    """The call's input, weight and bias, or torch's refusal to make them (its verdict)."""
    from convcheck.ops.convolution.torch_oracle._torch import real_tensor

    specs = [None if s is None else TensorSpec(tuple(s[0]), s[1], tuple(s[2])) for s in packed[:3]]
    assert specs[0] is not None and specs[0].rank <= 5, "rank >= 6 inputs never run on real CPU"
    try:
        return [
            None if spec is None else real_tensor(spec, role)
            for spec, role in zip(specs, ("input", "weight", "bias"), strict=True)
        ]
    except RuntimeError as e:  # torch cannot make such a tensor: its verdict too
        return {"verdict": "reject", "error": type(e).__name__, "message": str(e)}


def _call(
    tensors: list[Any] | dict[str, Any], packed: list[Any], onednn: bool, threads: int, values: bool
) -> dict[str, Any]:
    if isinstance(tensors, dict):
        return tensors
    torch = _STATE["torch"]
    stride, padding, dilation, transposed, output_padding, groups = packed[3:]
    try:
        with settings(int(threads), bool(onednn)):
            out = torch.ops.aten.convolution.default(
                *tensors, stride, padding, dilation, transposed, output_padding, groups
            )
    except Exception as e:  # everything torch raises is its verdict
        return {"verdict": "reject", "error": type(e).__name__, "message": str(e)}
    answer: dict[str, Any] = {
        "verdict": "accept",
        "sizes": list(out.shape),
        "dtype": str(out.dtype).removeprefix("torch."),
    }
    if values:
        answer["values"] = encode_values(out)
    return answer


# The dtypes whose every value a float32 holds exactly.
_FLOAT32_EXACT = ("torch.float32", "torch.float16", "torch.bfloat16")


def encode_values(tensor) -> str:
    """A tensor's values in logical (row-major) order, packed: ``decode_values`` reads them
    back. Little-endian float32s ("f") where they hold every value of the tensor's dtype
    exactly, float64s ("d") otherwise: half the bytes to pack, escape in JSON, send and
    read for most outputs, and the same values."""
    if str(tensor.dtype) in _FLOAT32_EXACT:
        kind, flat = "f", tensor.detach().float().reshape(-1).numpy().astype("<f4", copy=False)
    else:
        kind, flat = "d", tensor.detach().double().reshape(-1).numpy().astype("<f8", copy=False)
    return kind + base64.b64encode(flat.tobytes()).decode()
