"""The one exception a user of convcheck sees.

Internal invariants are plain ``assert`` statements; everything a user can get wrong
(a malformed case file, an unknown revision, a target library without the ABI) raises
``ConvcheckError`` with a message that names the argument and the value (shown by
``value_repr``, which keeps any value to one short line).
"""

import reprlib
from typing import Any


class ConvcheckError(Exception):
    """A user-facing error: the message is written for the person who will read it."""


class InvalidCase(ConvcheckError):
    """A case (JSON or Python) does not describe a call the kernel could be given."""


class _Short(reprlib.Repr):
    def repr_int(self, x: int, level: int) -> str:
        # repr itself refuses past 4300 digits; an integer this long is wrong whatever it is.
        if x.bit_length() > 128:
            return f"<an integer of {x.bit_length()} bits>"
        return repr(x)


_short = _Short()
_short.maxstring = 40
_short.maxother = 40


def value_repr(value: Any) -> str:
    """repr for an error message: a 50 MB list must not become a 17 MB line."""
    return _short.repr(value)
