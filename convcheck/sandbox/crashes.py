"""How a worker's death is told: ``Crash`` and ``Hang``, the signal's name, the
sanitizer's report classified and its unnamed frames named (addr2line)."""

from __future__ import annotations

import functools
import re
import shutil
import signal
import subprocess
from dataclasses import dataclass, field
from typing import Any

from convcheck.sanitizer import classify, python_fault_site

CRASH_REPORT_LIMIT = 8192  # characters of a crash's output kept in Crash.report


PARSE_LIMIT = 65536  # bytes of a crash's output searched for a sanitizer report


# A stack frame a sanitizer left unnamed: "#N 0xADDRESS  (/module.so+0xOFFSET)".
_UNNAMED_FRAME = re.compile(
    r"^(?P<head>\s*#(?P<number>\d+) 0x[0-9a-fA-F]+)\s+"
    r"\((?P<module>/[^()+]+)\+0x(?P<offset>[0-9a-fA-F]+)\)[ \t]*$",
    re.M,
)


_FRAME_NAMES: dict[tuple[str, int], tuple[str, str] | None] = {}  # addr2line's answers


@dataclass(frozen=True)
class Crash:
    """A request that killed its worker, or that made the handler raise.

    ``kind`` comes from a sanitizer report when there is one ("heap-buffer-overflow READ",
    "signed-integer-overflow", "SEGV null", "out-of-memory"), else from the signal
    ("SIGSEGV"), else "exit"; a handler's exception is "python-exception", and a result
    pipe that carried something other than results "corrupt-result". ``site`` says
    where ("conv_check_bias kernel.c:41", "ValueError: message"), or is "".
    ``report`` is the end of what the worker printed while it served the request.
    """

    kind: str
    site: str
    signal: str | None
    exit_status: int | None
    report: str = field(default="", repr=False)

    def describe(self) -> str:
        parts = [self.kind]
        if self.site:
            parts.append(self.site)
        if self.signal is not None and self.signal != self.kind:
            parts.append(self.signal)
        if self.exit_status is not None:
            parts.append(f"exit status {self.exit_status}")
        return "crash: " + ", ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "site": self.site,
            "signal": self.signal,
            "exit_status": self.exit_status,
        }


@dataclass(frozen=True)
class Hang:
    """A request with no result after ``timeout`` seconds; its worker was killed."""

    timeout: float

    def describe(self) -> str:
        return f"hang: no result within {self.timeout:g} s"

    def to_json(self) -> dict[str, Any]:
        return {"kind": "hang", "timeout": self.timeout}


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def death_reason(returncode: int | None, output: str) -> str:
    """Why a process that should have started died: how, and its last line."""
    crash = crash_of(returncode, output)
    last = output.strip().splitlines()[-1:]
    reason = crash.describe()
    if crash.kind == "exit" and last:
        reason += f": {last[0]}"
    return reason


def crash_of(returncode: int | None, output: str) -> Crash:
    """The Crash for a worker that died with ``returncode`` after printing ``output``."""
    assert returncode is not None  # the process is reaped (``Child.stop``)
    output = _name_frames(output)
    signal_name = _signal_name(-returncode) if returncode < 0 else None
    exit_status = returncode if returncode >= 0 else None
    found = classify(output)
    if found is None:
        kind, site = signal_name or "exit", python_fault_site(output)
    else:
        kind, site = found
    return Crash(kind, site, signal_name, exit_status, output[-CRASH_REPORT_LIMIT:])


def _name_frames(output: str) -> str:
    """``output`` with its unnamed frames named, as the sanitizer would name them ("in
    function file:line").

    A sanitizer symbolizes in the worker that crashed, and a forked worker spends a good
    part of its crash reading debug information for it, again and again; the native judge
    tells it not to, and the parent names the frames here instead, asking addr2line once
    per address.
    """
    frames = list(_UNNAMED_FRAME.finditer(output))
    if not frames or _addr2line_path() is None:
        return output
    unknown: dict[str, list[int]] = {}
    for frame in frames:
        module, offset = _frame_address(frame)
        if (module, offset) not in _FRAME_NAMES:
            unknown.setdefault(module, []).append(offset)
    for module, offsets in unknown.items():
        _FRAME_NAMES.update(_addr2line(module, sorted(set(offsets))))

    def named(frame: re.Match) -> str:
        found = _FRAME_NAMES.get(_frame_address(frame))
        return f"{frame['head']} in {found[0]} {found[1]}" if found else frame[0]

    return _UNNAMED_FRAME.sub(named, output)


def _frame_address(frame: re.Match) -> tuple[str, int]:
    # Above frame #0 the address is a return address: the call is the byte before.
    return frame["module"], int(frame["offset"], 16) - (frame["number"] != "0")


@functools.cache
def _addr2line_path() -> str | None:
    return shutil.which("addr2line")  # once: PATH's directories cost a stat each, per crash


def _addr2line(module: str, offsets: list[int]) -> dict[tuple[str, int], tuple[str, str] | None]:
    """``(function, "file:line")`` of each offset in ``module`` (the innermost inlined
    function), or None where addr2line does not know."""
    names: dict[tuple[str, int], tuple[str, str] | None] = {(module, o): None for o in offsets}
    addr2line = _addr2line_path()
    assert addr2line is not None  # asked only where there is one (``_name_frames``)
    try:
        done = subprocess.run(
            [addr2line, "-a", "-f", "-i", "-C", "-e", module] + [hex(o) for o in offsets],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return names
    lines = done.stdout.splitlines()
    for at, line in enumerate(lines[:-2]):
        if not line.startswith("0x"):
            continue
        function, location = lines[at + 1], lines[at + 2].partition(" (discriminator")[0]
        if function != "??" and not location.startswith("??"):
            names[module, int(line, 16)] = (function, location)
    return names
