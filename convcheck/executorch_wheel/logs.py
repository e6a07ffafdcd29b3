"""ExecuTorch's log lines, turned into convcheck's check ids (an op's checks doc).

A failed check in the portable kernel returns ``InvalidArgument``; which check failed is
only in the log it prints on stderr, innermost first::

    [kernel_ops_util.cpp:53] Expected array[0] > 1, found 0
    [kernel_ops_util.cpp:44] Check failed (int_array_all_ge(array, min_val)):
    [kernel_ops_util.cpp:421] Check failed (stride_is_valid(stride, kernel_ndim, false)):
    [op_convolution.cpp:363] Check failed (check_convolution_args( in, weight, ...)):
    [method.cpp:1483] KernelCall failed at instruction 0:0 in operator ...

``LogMap.classify`` reads the lines in order and answers with the first that a site of an
op's map (its ``log_map.json``) recognises. The sites match the messages, and where a line
names its function (the source target's adapter writes ``[file:line function] message``)
the function a site names; never the line numbers, which move from one release to the
next. A log that none matches is ``executorch.unknown:<first words>``. An op's map serves
the wheel (its ``executorch_target``) and a user's checkout (its ``executorch_source``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

# [file.cpp:NNN] message, or [file.cpp:NNN function] message (the source target's adapter
# knows the function; the wheel's log does not say it).
LOG_LINE = re.compile(
    r"^\[(?P<where>[\w.+-]+:\d+)(?: (?P<function>[^\]]+))?\] (?P<message>.*)$", re.M
)

# What the out tensor's resize says when it fails for want of room: the harness's own
# probes (an op's target crafts them), not a check of the kernel.
CAPACITY = re.compile(
    r"Attempted to resize a bounded tensor with a maximum capacity of (\d+) elements "
    r"to (\d+) elements"
)
STATIC_SHAPE = re.compile(
    r"Attempted to resize a static tensor\. Expected shape \(([\d, ]*)\), "
    r"but received \(([\d, -]*)\)"
)


class LogKind(StrEnum):
    """What decided a failed execution's log."""

    REJECT = "reject"  # a check of the map rejected the call: ``check`` is ours
    CAPACITY = "capacity"  # out's buffer is too small for the sizes asked for: ``numel``
    STATIC = "static"  # out's static shape differs from the sizes computed: ``sizes``
    UNKNOWN = "unknown"  # no line the map knows: ``check`` is an ``unknown_id``


@dataclass(frozen=True)
class LogVerdict:
    """What a failed execution's log says: a check id, or how the resize of out failed."""

    kind: LogKind
    check: str | None = None
    numel: int | None = None  # CAPACITY: the elements the kernel asked for
    sizes: tuple[int, ...] | None = None  # STATIC: the sizes the kernel computed
    line: str = ""  # the log line that decided, for people


def lines(log: str) -> list[tuple[str, str | None, str]]:
    """``(where, function or None, message)`` of each ExecuTorch log line, in order."""
    return [(m["where"], m["function"], m["message"].strip()) for m in LOG_LINE.finditer(log)]


def unknown_id(message: str) -> str:
    words = re.sub(r"-?\d+", "N", message).split()[:6]
    return "executorch.unknown:" + " ".join(words)


def _named(check: str, match: re.Match) -> str:
    """``check`` with "{0}" replaced by what the site's regex captured first."""
    return check.replace("{0}", match[1]) if "{0}" in check else check


class LogMap:
    """An op's map from log sites to check ids, read from its JSON (``{"sites": [...]}``):
    each site a message regex and the check id it means, and the function it must be in
    where that is known. "{0}" in a check id is the regex's first group. In the order the
    kernel runs its checks; the first line (innermost) that a site matches decides."""

    def __init__(self, path: Path) -> None:
        sites = json.loads(path.read_text())["sites"]
        self.patterns: tuple[tuple[str, str], ...] = tuple(
            (site["message"], site["check"]) for site in sites
        )
        # The ids of ExecuTorch's own checks that the map gives (a target's, beside ours).
        self.check_ids = frozenset(check for _, check in self.patterns if "{" not in check)
        self._compiled = tuple(
            (re.compile(site["message"]), site.get("function"), site["check"]) for site in sites
        )

    def classify(self, log: str) -> LogVerdict:
        found = lines(log)
        for where, function, message in found:
            text = f"[{where}] {message}"
            capacity = CAPACITY.search(message)
            if capacity:
                return LogVerdict(LogKind.CAPACITY, numel=int(capacity[2]), line=text)
            static = STATIC_SHAPE.search(message)
            if static:
                sizes = tuple(int(s) for s in static[2].split(",") if s.strip())
                return LogVerdict(LogKind.STATIC, sizes=sizes, line=text)
            for pattern, site_function, check in self._compiled:
                match = pattern.search(message)
                if match and (site_function is None or function in (None, site_function)):
                    return LogVerdict(LogKind.REJECT, _named(check, match), line=text)
        first = found[0][2] if found else log.strip().split("\n")[0]
        return LogVerdict(LogKind.UNKNOWN, unknown_id(first or "no log"), line=first)
