"""The worker side of the ExecuTorch-source target: convcheck's native worker, plus the
kernel's log turned into a check id.

The adapter records the error-level log lines of each call; a rejection's check id is the
first of them that the shipped log map recognises
(``convcheck.ops.convolution.executorch_target.logs``, the same map as the ExecuTorch
wheel's), not the adapter's placeholder.
"""

from __future__ import annotations

import ctypes
from typing import Any

from convcheck.executorch_wheel.logs import unknown_id
from convcheck.ops.convolution.executorch_target import logs
from convcheck.ops.convolution.native import worker as native

_log: Any  # the library's ``convcheck_executorch_log``, set by ``init``


def init(config: dict) -> None:
    global _log
    native.init(config)
    _log = native._state.lib.convcheck_executorch_log
    _log.restype = ctypes.c_char_p
    _log.argtypes = []


def handle(request: dict) -> dict:
    answer = native.handle(request)
    if answer["verdict"] == "reject":
        log = _log().decode(errors="replace")
        answer["check"] = logs.classify(log).check or unknown_id(log or "no log")
        answer["log"] = log
    return answer
