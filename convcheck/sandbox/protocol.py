"""The worker protocol, defined once: the message kinds, the framing and the limits that the
parent (``convcheck.sandbox``), the Python worker (``convcheck/_worker_main.py``) and the C
worker (``convcheck/native/worker_main.c``) speak.

The C worker cannot import this module, so ``c_header`` writes it as a C header, which
``convcheck/native/build.py`` generates and compiles ``worker_main.c`` with (the worker's
cache key is the header's text, so an edit here rebuilds it); ``tests/sandbox/
test_protocol.py`` fails if either worker spells a message or a limit itself. The Python
worker loads this file by its path before it has a ``sys.path``: hence the standard
library only.

Every message starts with its kind, one byte. A worker's messages are lines (a Python
worker: the kind, JSON, a newline) or records (a program worker, both ways: a length, a
``RECORD_LENGTH``, then that many bytes); a fork server's answers are lines from either.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # an annotation only: the Python worker loads this module at each start
    from collections.abc import Mapping

# Worker to parent, once: ready for requests; or why it could not start.
STARTED = b"S"
START_FAILED = b"F"
# Worker to parent, one per request: the result; or the handler failed (a Python worker:
# JSON ``{"site", "report"}``; a program: two strings, ``record_string``).
RESULT = b"R"
ERROR = b"E"
# Parent to fork server: fork a worker (the message carries its request pipe, result pipe
# and output file); the server answers the worker's pid, or why it will not fork.
FORK = b"F"
FORKED = b"P"
FORK_REFUSED = b"T"
END_OF_LINE = b"\n"

# A program worker's arguments after its three descriptors: the mode, then the memory
# limit in MB or NO_LIMIT.
MODE_SERVE = "serve"
MODE_FORK_SERVER = "fork-server"
NO_LIMIT = "-"

# Both ends run on one machine: its byte order, no padding.
RECORD_LENGTH = struct.Struct("=I")
REQUEST_LIMIT = 64 << 20  # bytes of a request a program worker reads (it answers a longer one)
RESULT_LIMIT = 1 << 28  # bytes: no result is this long; a longer length is garbage

# A worker moves its two pipes to a random descriptor in [PRIVATE_FD_LOW, PRIVATE_FD_TOP),
# above what a process inherits or opens first, out of reach of a library that writes to
# "its" descriptor 3..31 or closes it.
PRIVATE_FD_LOW = 256
PRIVATE_FD_TOP = 4096
REPORT_LIMIT = 8192  # of the output an error message's report ends with
SITE_LIMIT = 200  # characters of an error's site and of a failed start's reason


def record_string(message: bytes, at: int) -> tuple[str, int]:
    """The string of a record at ``at`` (a ``RECORD_LENGTH``, then UTF-8 bytes), and where
    the record goes on; ValueError (or struct.error) when it runs past the end."""
    (length,) = RECORD_LENGTH.unpack_from(message, at)
    end = at + RECORD_LENGTH.size + length
    if end > len(message):
        raise ValueError("past the end")
    return message[at + RECORD_LENGTH.size : end].decode(errors="replace"), end


# What the C worker needs, by the name it has there (CONVCHECK_ prefixed).
_C_NAMES = (
    "STARTED",
    "START_FAILED",
    "RESULT",
    "ERROR",
    "FORKED",
    "FORK_REFUSED",
    "MODE_SERVE",
    "MODE_FORK_SERVER",
    "NO_LIMIT",
    "REQUEST_LIMIT",
    "PRIVATE_FD_LOW",
    "PRIVATE_FD_TOP",
    "REPORT_LIMIT",
    "SITE_LIMIT",
)


def c_header(name: str, enums: Mapping[str, int]) -> str:
    """This protocol as the C header ``name``, with ``enums`` (more names and their values,
    such as an answer's codes) after it. Message kinds are ``char`` constants, modes
    strings, limits integers."""
    guard = "CONVCHECK_" + name.upper().replace(".", "_")
    lines = [
        f"/* {name}: generated from convcheck/sandbox/protocol.py by convcheck/native/build.py;",
        " * edit that module, not this file. */",
        f"#ifndef {guard}",
        f"#define {guard}",
        "",
    ]
    for constant in _C_NAMES:
        value = globals()[constant]
        if isinstance(value, bytes):
            lines.append(f"#define CONVCHECK_{constant} '{value.decode()}'")
        elif isinstance(value, str):
            lines.append(f'#define CONVCHECK_{constant} "{value}"')
        else:
            lines.append(f"enum {{ CONVCHECK_{constant} = {value} }};")
    lines.extend(f"enum {{ CONVCHECK_{key} = {value} }};" for key, value in enums.items())
    return "\n".join([*lines, "", f"#endif /* {guard} */", ""])
