"""Cases from fuzzer bytes: what the atheris harnesses decode.

Bytes that parse as a case's JSON are that case (so the corpus seeds the fuzzer, and a
dictionary of JSON tokens helps it); anything else drives ``generate.build_case`` through
atheris' ``FuzzedDataProvider``, so every mutation still decodes to a call.
"""

from __future__ import annotations

from convcheck.case import Case
from convcheck.errors import InvalidCase
from convcheck.generate import build_case


class FuzzedSource:
    """A ``generate.Source`` over a FuzzedDataProvider; an exhausted one answers the
    lowest value, which ``build_case`` treats as its most ordinary choice."""

    def __init__(self, provider) -> None:
        self._fdp = provider

    def integer(self, low: int, high: int) -> int:
        return self._fdp.ConsumeIntInRange(low, high)

    def choice(self, options: tuple):
        return options[self._fdp.ConsumeIntInRange(0, len(options) - 1)]

    def chance(self, p: float) -> bool:
        return self._fdp.ConsumeProbability() < p


def case_from_bytes(data: bytes) -> Case:
    import atheris

    if data[:1] == b"{":
        try:
            return Case.loads(data)
        except InvalidCase:
            pass
    return build_case(FuzzedSource(atheris.FuzzedDataProvider(data)))


def dictionary() -> str:
    """A libFuzzer dictionary: the edge integers as JSON tokens and as raw bytes."""
    from convcheck.generate import EDGE_INT64

    lines = ["# convcheck: integers where the checks break, as JSON text and as raw int64 bytes"]
    for value in sorted(set(EDGE_INT64)):
        lines.append(f'"{value}"')
        raw = (value & (2**64 - 1)).to_bytes(8, "little")
        lines.append('"' + "".join(f"\\x{b:02x}" for b in raw) + '"')
    for token in (
        '"transposed": true',
        '"bias": null',
        '"groups": ',
        '"dtype": "bool"',
        '"dim_order": [0, 2, 3, 1]',
    ):
        lines.append('"' + token.replace("\\", "\\\\").replace('"', '\\"') + '"')
    return "\n".join(lines) + "\n"
