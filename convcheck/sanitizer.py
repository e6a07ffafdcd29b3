"""Sanitizer reports read back into a crash's kind and site.

``classify(output)`` finds the first ASan, UBSan or LSan report (or a kernel's own
"work past limit" halt) in what a dead process printed and names its kind
("heap-buffer-overflow READ", "signed-integer-overflow", "SEGV null", "out-of-memory")
and the first frame of the program's own code ("conv_check_bias kernel.c:41");
``python_fault_site`` reads a faulthandler traceback. Pure text in, text out: the sandbox
owns the processes.
"""

from __future__ import annotations

import os
import re

from convcheck.fixedint import WORK_PAST_LIMIT

__all__ = ["classify", "python_fault_site"]

_UBSAN_ERROR = re.compile(r"^(?P<where>.*?): runtime error: (?P<message>.*)$", re.M)
_SANITIZER_ERROR = re.compile(r"ERROR: (?P<tool>\w+)Sanitizer: (?P<message>.*)$", re.M)
# A kernel's own halt where its loops would spend past its work limit on iterations that
# read nothing (convcheck's pooling kernel prints it): not a sanitizer's, told the same way.
_WORK_PAST_LIMIT = re.compile(r"^convcheck: work past limit in (?P<where>\S+ \S+:\d+)", re.M)
# Dying of its RSS limit, ASan prints no "ERROR:" line.
_RSS_EXHAUSTED = re.compile(r"Sanitizer: hard rss limit exhausted.*$", re.M)
_FRAME_LINE = re.compile(r"\s*#\d+ 0x")
_FRAME = re.compile(
    r"\s*#\d+ 0x[0-9a-fA-F]+\s+(?:in (?P<function>.+?)\s+)?"
    r"(?:(?P<file>[^\s()]+?):(?P<line>\d+)(?::\d+)?|\([^)]*\))"
    r"(?: \(BuildId: [0-9a-fA-F]+\))?\s*"
)
# Frames of the sanitizer runtime and libc (interceptors, malloc): never the site.
_RUNTIME_FRAME = re.compile(
    r"__interceptor_|__asan_|__ubsan_|__sanitizer_|__lsan_|libsanitizer|sanitizer_common"
    r"|compiler-rt|/sysdeps/|lib(?:asan|ubsan|lsan|c)\.so"
)
_LOCATION = re.compile(r"(?P<file>.+?):(?P<line>\d+)(?::\d+)?")
_UBSAN_KINDS = [
    (re.compile(pattern), kind)
    for pattern, kind in (
        (r"^signed integer overflow", "signed-integer-overflow"),
        (r"^negation of .* cannot be represented", "signed-integer-overflow"),
        (r"^division of .* by -1 cannot be represented", "signed-integer-overflow"),
        (r"^unsigned integer overflow", "unsigned-integer-overflow"),
        (r"division by zero", "division-by-zero"),
        (r"^shift exponent", "shift-exponent"),
        (r"^left shift of", "shift-base"),
        (r"^applying (?:non-)?zero offset|^pointer index expression", "pointer-overflow"),
        (r"^(?:addition|subtraction) of unsigned offset", "pointer-overflow"),
        (r"null pointer of type", "null-pointer-use"),
        (r"misaligned address", "misaligned-pointer-use"),
        (r"out of bounds for type", "out-of-bounds-index"),
        (r"is outside the range of representable values", "float-cast-overflow"),
        (r"^load of value .*, which is not a valid value", "invalid-value-load"),
        (r"^variable length array bound", "vla-bound"),
        (r"unreachable program point", "unreachable"),
        (r"end of a value-returning function", "missing-return"),
        (r"^null pointer passed as argument", "nonnull-argument"),
        (r"^null pointer returned from function", "returns-nonnull"),
        (r"^passing zero to", "invalid-builtin-use"),
        (r"insufficient space for an object", "object-size"),
        (r"^implicit conversion", "implicit-conversion"),
    )
]
_DEADLY_SIGNAL = re.compile(r"(SEGV|BUS|FPE|ILL) on unknown address(?: (0x[0-9a-fA-F]+))?")
_OUT_OF_MEMORY = re.compile(
    r"out of memory|requested allocation size|exceeds maximum supported size"
    r"|allocator exceeded the RSS limit|RSS limit exceeded"
)
_ASAN_PHRASES = (
    ("attempting double-free", "double-free"),
    ("attempting free on address which was not malloc()-ed", "bad-free"),
    ("calloc parameters overflow", "calloc-overflow"),
    ("reallocarray parameters overflow", "reallocarray-overflow"),
    ("pvalloc parameters overflow", "pvalloc-overflow"),
    ("invalid alignment requested", "invalid-allocation-alignment"),
    ("detected memory leaks", "memory-leak"),
)
_HYPHENATED = re.compile(r"[a-z]+(?:-[a-z]+)+")
_ACCESS = re.compile(r"(READ|WRITE) of size")
_TOOLS = {"Address": "asan", "UndefinedBehavior": "ubsan", "Leak": "lsan"}
_PYTHON_FRAME = re.compile(
    r'^  File "(?P<file>[^"]+)", line (?P<line>\d+) in (?P<function>\S+)', re.M
)


def classify(output: str) -> tuple[str, str] | None:
    """``(kind, site)`` of the first sanitizer report in ``output``, or None."""
    found = [
        match
        for match in (
            _UBSAN_ERROR.search(output),
            _SANITIZER_ERROR.search(output),
            _RSS_EXHAUSTED.search(output),
            _WORK_PAST_LIMIT.search(output),
        )
        if match
    ]
    if not found:
        return None
    first = min(found, key=lambda match: match.start())
    if first.re is _WORK_PAST_LIMIT:
        function, _, location = first["where"].partition(" ")
        return WORK_PAST_LIMIT, f"{function} {os.path.basename(location)}"
    following = output[first.end() :].split("\n")[1:]
    if first.re is _UBSAN_ERROR:
        # UBSan prints its stack right under the message, if at all.
        frames = _stack(following, skip=0)
        return _ubsan_kind(first["message"]), _ubsan_site(first["where"], frames)
    # ASan prints a few lines ("READ of size 4 ...", hints) before its stack.
    frames = _stack(following, skip=4)
    if first.re is _RSS_EXHAUSTED:
        return "out-of-memory", _site(frames)
    return _sanitizer_kind(first["tool"], first["message"], following[:3]), _site(frames)


def _stack(lines: list[str], skip: int) -> list[re.Match | None]:
    """The parsed frames of the stack trace that starts after at most ``skip`` lines."""
    frames: list[re.Match | None] = []
    for number, line in enumerate(lines):
        if _FRAME_LINE.match(line):
            frames.append(_FRAME.fullmatch(line))
        elif frames or number >= skip:
            break
    return frames


def _ubsan_kind(message: str) -> str:
    for pattern, kind in _UBSAN_KINDS:
        if pattern.search(message):
            return kind
    return "ubsan"


def _ubsan_site(where: str, frames: list[re.Match | None]) -> str:
    location = _LOCATION.fullmatch(where)
    parts = []
    if frames and frames[0] and frames[0]["function"]:
        parts.append(frames[0]["function"])
    if location:
        parts.append(f"{os.path.basename(location['file'])}:{location['line']}")
    return " ".join(parts)


def _sanitizer_kind(tool: str, message: str, following: list[str]) -> str:
    deadly = _DEADLY_SIGNAL.match(message)
    if deadly:
        name, address = deadly.group(1, 2)
        # The zero page: a null pointer, or a small offset from one.
        if name == "SEGV" and address is not None and int(address, 16) < 4096:
            return "SEGV null"
        return name
    if _OUT_OF_MEMORY.search(message):
        return "out-of-memory"
    for phrase, kind in _ASAN_PHRASES:
        if message.startswith(phrase):
            return kind
    named = _HYPHENATED.match(message)
    if named is None:
        return _TOOLS.get(tool, tool.lower())
    access = next((m for m in map(_ACCESS.match, following) if m), None)
    return f"{named[0]} {access[1]}" if access else named[0]


def _site(frames: list[re.Match | None]) -> str:
    """The first frame of the program's own code: "function file.c:line", or "function"."""
    fallback = ""
    for frame in frames:
        if frame is None or not frame["function"] or _RUNTIME_FRAME.search(frame[0]):
            continue
        if frame["file"]:
            return f"{frame['function']} {os.path.basename(frame['file'])}:{frame['line']}"
        fallback = fallback or frame["function"]
    return fallback


def python_fault_site(output: str) -> str:
    """Innermost Python frame of a faulthandler traceback ("function file.py:line"), or ""."""
    frame = _PYTHON_FRAME.search(output)
    if frame is None:
        return ""
    return f"{frame['function']} {os.path.basename(frame['file'])}:{frame['line']}"
