"""The parent's side of the worker protocol (``protocol``): requests and results framed as
JSON lines (Python workers, ``convcheck/_worker_main.py``) or as length-prefixed records
(program workers such as ``convcheck/native/worker_main.c``), and a worker's messages read
as results."""

from __future__ import annotations

import json
import struct
from typing import Any

from convcheck.sandbox import protocol
from convcheck.sandbox.crashes import Crash
from convcheck.sandbox.protocol import record_string
from convcheck.validation import invalid


def encode_request(index: int, request: object) -> bytes:
    if not isinstance(request, dict):
        raise invalid(f"requests[{index}]", request, "be a dict")
    try:
        return json.dumps(request).encode() + protocol.END_OF_LINE
    except (TypeError, ValueError) as exc:
        raise invalid(f"requests[{index}]", request, f"be JSON-able ({exc})") from None


class LineFraming:
    """A Python worker's results: lines, ``RESULT`` or ``ERROR`` and JSON (see ``_decode``)."""

    @staticmethod
    def split(data: bytes) -> tuple[list[bytes], bytes]:
        *lines, partial = data.split(protocol.END_OF_LINE)
        return lines, partial

    @staticmethod
    def decode(line: bytes) -> dict[str, Any] | Crash | None:
        return _decode(line)


class RecordFraming:
    """A program worker's messages, both ways: a ``RECORD_LENGTH``, then that many bytes.
    From the worker: ``STARTED``, ``START_FAILED`` and why, ``RESULT`` and the answer (its
    bytes are the result) or ``ERROR``, a site and a report (the program could not answer:
    a "python-exception" Crash; each string a ``record_string``)."""

    @classmethod
    def encode(cls, index: int, request: object) -> bytes:
        if not isinstance(request, bytes):
            raise invalid(f"requests[{index}]", request, "be bytes")
        return protocol.RECORD_LENGTH.pack(len(request)) + request

    @classmethod
    def split(cls, data: bytes) -> tuple[list[bytes], bytes]:
        """The complete messages, and what is left; an empty message (no message's form)
        when a length is garbage, and the rest dropped."""
        messages: list[bytes] = []
        at = 0
        head = protocol.RECORD_LENGTH.size
        while len(data) - at >= head:
            (length,) = protocol.RECORD_LENGTH.unpack_from(data, at)
            if length > protocol.RESULT_LIMIT:
                messages.append(b"")
                return messages, b""
            if len(data) - at - head < length:
                break
            messages.append(data[at + head : at + head + length])
            at += head + length
        return messages, data[at:]

    @classmethod
    def decode(cls, message: bytes) -> bytes | Crash | None:
        kind = message[:1]
        if kind == protocol.RESULT:
            return message[1:]
        if kind != protocol.ERROR:
            return None
        try:
            site, at = record_string(message, 1)
            report, at = record_string(message, at)
        except (struct.error, ValueError):
            return None
        if at != len(message):
            return None
        first = site.strip().splitlines()[:1]
        site = first[0][: protocol.SITE_LIMIT] if first else ""
        return Crash("python-exception", site, None, None, report)


def _decode(line: bytes) -> dict[str, Any] | Crash | None:
    """A worker's result line as a result, or None when it is not one."""
    kind = line[:1]
    try:
        message = json.loads(line[1:])
    except ValueError:
        return None
    if not isinstance(message, dict):
        return None
    if kind == protocol.RESULT:
        return message
    site, report = message.get("site"), message.get("report")
    if kind != protocol.ERROR or not isinstance(site, str) or not isinstance(report, str):
        return None
    return Crash("python-exception", site, None, None, report)
