"""The parent's side of the worker protocol: requests and results framed as JSON lines
(Python workers, ``convcheck/_worker_main.py``) or as length-prefixed records (program
workers such as ``convcheck/native/worker_main.c``)."""

from __future__ import annotations

import json
import struct
from typing import Any

from convcheck.sandbox.crashes import Crash
from convcheck.validation import invalid


def _encode(index: int, request: object) -> bytes:
    if not isinstance(request, dict):
        raise invalid(f"requests[{index}]", request, "be a dict")
    try:
        return (json.dumps(request) + "\n").encode()
    except (TypeError, ValueError) as exc:
        raise invalid(f"requests[{index}]", request, f"be JSON-able ({exc})") from None


class _LineFraming:
    """A Python worker's results: lines, ``R<json>`` or ``E<json>`` (see ``_decode``)."""

    @staticmethod
    def split(data: bytes) -> tuple[list[bytes], bytes]:
        *lines, partial = data.split(b"\n")
        return lines, partial

    @staticmethod
    def decode(line: bytes) -> dict[str, Any] | Crash | None:
        return _decode(line)


class _RecordFraming:
    """A program worker's messages, both ways: a length (uint32, the machine's byte order),
    then that many bytes. From the worker: ``S``, ``F<message>``, ``R<answer>`` (its bytes
    are the result) or ``E<site><report>`` (the program could not answer: a
    "python-exception" Crash; each string a uint32 length and UTF-8 bytes)."""

    _LENGTH = struct.Struct("=I")
    _LIMIT = 1 << 28  # bytes: no answer is this long; a longer length is garbage

    @classmethod
    def encode(cls, index: int, request: object) -> bytes:
        if not isinstance(request, bytes):
            raise invalid(f"requests[{index}]", request, "be bytes")
        return cls._LENGTH.pack(len(request)) + request

    @classmethod
    def split(cls, data: bytes) -> tuple[list[bytes], bytes]:
        """The complete messages, and what is left; an empty message (no message's form)
        when a length is garbage, and the rest dropped."""
        messages: list[bytes] = []
        at = 0
        while len(data) - at >= 4:
            (length,) = cls._LENGTH.unpack_from(data, at)
            if length > cls._LIMIT:
                messages.append(b"")
                return messages, b""
            if len(data) - at - 4 < length:
                break
            messages.append(data[at + 4 : at + 4 + length])
            at += 4 + length
        return messages, data[at:]

    @classmethod
    def decode(cls, message: bytes) -> bytes | Crash | None:
        tag = message[:1]
        if tag == b"R":
            return message[1:]
        if tag != b"E":
            return None
        try:
            site, at = record_string(message, 1)
            report, at = record_string(message, at)
        except (struct.error, ValueError):
            return None
        if at != len(message):
            return None
        first = site.strip().splitlines()[:1]
        return Crash("python-exception", first[0][:200] if first else "", None, None, report)


def _decode(line: bytes) -> dict[str, Any] | Crash | None:
    """A worker's result line as a result, or None when it is not one."""
    tag = line[:1]
    try:
        message = json.loads(line[1:])
    except ValueError:
        return None
    if not isinstance(message, dict):
        return None
    if tag == b"R":
        return message
    site, report = message.get("site"), message.get("report")
    if tag != b"E" or not isinstance(site, str) or not isinstance(report, str):
        return None
    return Crash("python-exception", site, None, None, report)


def record_string(message: bytes, at: int) -> tuple[str, int]:
    """The string of a record at ``at`` (a uint32 length, then UTF-8 bytes), and where the
    record goes on; ValueError (or struct.error) when it runs past the end."""
    (length,) = _RecordFraming._LENGTH.unpack_from(message, at)
    end = at + 4 + length
    if end > len(message):
        raise ValueError("past the end")
    return message[at + 4 : end].decode(errors="replace"), end
