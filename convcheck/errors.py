"""The one exception a user of convcheck sees.

Internal invariants are plain ``assert`` statements; everything a user can get wrong
(a malformed case file, an unknown revision, a target library without the ABI) raises
``ConvcheckError`` with a message that names the argument and the value.
"""


class ConvcheckError(Exception):
    """A user-facing error: the message is written for the person who will read it."""


class InvalidCase(ConvcheckError):
    """A case (JSON or Python) does not describe a call the kernel could be given."""
