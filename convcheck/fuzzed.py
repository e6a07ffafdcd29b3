"""Cases from fuzzer bytes: what the atheris harnesses decode.

Bytes that parse as a case's JSON are that case (so the corpus seeds the fuzzer, and a
dictionary of JSON tokens helps it); anything else drives the op's ``build_case`` through
atheris' ``FuzzedDataProvider``, so every mutation still decodes to a call.
"""

from __future__ import annotations

from convcheck import registry
from convcheck.case import Case
from convcheck.errors import InvalidCase
from convcheck.schema import Bool, Int, OptionalInt, Tensor, schema_of


class FuzzedSource:
    """A ``generate.Source`` over a FuzzedDataProvider; an exhausted one answers the
    lowest value, which a ``build_case`` treats as its most ordinary choice."""

    def __init__(self, provider) -> None:
        self._fdp = provider

    def integer(self, low: int, high: int) -> int:
        return self._fdp.ConsumeIntInRange(low, high)

    def choice(self, options: tuple):
        return options[self._fdp.ConsumeIntInRange(0, len(options) - 1)]

    def chance(self, p: float) -> bool:
        return self._fdp.ConsumeProbability() < p


def case_from_bytes(data: bytes, op: str = registry.DEFAULT_OP) -> Case:
    import atheris

    if data[:1] == b"{":
        try:
            return registry.loads_case(data, op=op)
        except InvalidCase:
            pass
    return registry.get(op).build_case(FuzzedSource(atheris.FuzzedDataProvider(data)))


def dictionary(op: str = registry.DEFAULT_OP) -> str:
    """A libFuzzer dictionary: the edge integers as JSON tokens and as raw bytes."""
    from convcheck.generate import EDGE_INT64

    lines = ["# convcheck: integers where the checks break, as JSON text and as raw int64 bytes"]
    for value in sorted(set(EDGE_INT64)):
        lines.append(f'"{value}"')
        raw = (value & (2**64 - 1)).to_bytes(8, "little")
        lines.append('"' + "".join(f"\\x{b:02x}" for b in raw) + '"')
    for token in (*_argument_tokens(registry.get(op).case_type), '"dtype": "bool"'):
        lines.append('"' + token.replace("\\", "\\\\").replace('"', '\\"') + '"')
    return "\n".join(lines) + "\n"


def _argument_tokens(case_type: type) -> list[str]:
    """The JSON a mutation is likeliest to need spelled whole: a flag set, an optional
    tensor left out, a scalar's name, a channels-last dim order."""
    tokens = []
    for arg in schema_of(case_type):
        if isinstance(arg, Bool):
            tokens.append(f'"{arg.name}": {"false" if arg.simplest else "true"}')
        elif isinstance(arg, Tensor) and arg.optional:
            tokens.append(f'"{arg.name}": null')
        elif isinstance(arg, Int | OptionalInt):
            tokens.append(f'"{arg.name}": ')
    return [*tokens, '"dim_order": [0, 2, 3, 1]']
