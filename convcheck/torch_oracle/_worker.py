"""The torch judge's worker side: real CPU ``aten.convolution`` in a process that may die.

Run by ``convcheck.sandbox`` (``init(config)`` once, then ``handle(request)`` per
request). A request is ``{"case": <case JSON>, "onednn": bool, "values": bool}``; the
answer is ``{"verdict": "accept", "sizes": [...], "dtype": "float32", "values": [...]}``
or ``{"verdict": "reject", "error": "RuntimeError", "message": "..."}``. A torch crash
kills the worker; the sandbox reports it.
"""

from __future__ import annotations

import math
from typing import Any

_STATE: dict[str, Any] = {}


def init(config: dict[str, Any]) -> None:
    import torch

    torch.set_num_threads(int(config["threads"]))
    _STATE["threads"] = int(config["threads"])
    _STATE["torch"] = torch


def handle(request: dict[str, Any]) -> dict[str, Any]:
    from convcheck.case import Case
    from convcheck.torch_oracle._torch import real_tensor

    torch = _STATE["torch"]
    case = Case.from_json(request["case"])
    assert case.input.rank <= 5, "rank >= 6 inputs never run on real CPU"
    try:
        inp = real_tensor(case.input, "input")
        weight = real_tensor(case.weight, "weight")
        bias = None if case.bias is None else real_tensor(case.bias, "bias")
    except RuntimeError as e:  # torch cannot make such a tensor: its verdict too
        return {"verdict": "reject", "error": type(e).__name__, "message": str(e)}
    old = torch.backends.mkldnn.enabled
    torch.backends.mkldnn.enabled = bool(request["onednn"])
    try:
        out = torch.ops.aten.convolution.default(
            inp,
            weight,
            bias,
            list(case.stride),
            list(case.padding),
            list(case.dilation),
            case.transposed,
            list(case.output_padding),
            case.groups,
        )
    except Exception as e:  # everything torch raises is its verdict
        return {"verdict": "reject", "error": type(e).__name__, "message": str(e)}
    finally:
        torch.backends.mkldnn.enabled = old
    answer: dict[str, Any] = {
        "verdict": "accept",
        "sizes": list(out.shape),
        "dtype": str(out.dtype).removeprefix("torch."),
    }
    if request.get("values"):
        flat = out.detach().to(torch.float64).reshape(-1).tolist()  # logical order
        answer["values"] = [v if math.isfinite(v) else repr(v) for v in flat]
    return answer
