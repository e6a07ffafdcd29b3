"""Argument checks, in one place and one wording: ``name=value must be ...``.

Every function raises ``ConvcheckError`` naming the argument and its value, and returns
the value (as the type it was checked to be) so that a caller can check and assign at once.
"""

from __future__ import annotations

import math
from collections.abc import Collection

from convcheck.errors import ConvcheckError, value_repr


def invalid(name: str, value: object, must: str) -> ConvcheckError:
    """The one wording, for a check no function below makes: ``name=value must ...``
    (``value_repr`` keeps a huge value to one short line)."""
    return ConvcheckError(f"{name}={value_repr(value)} must {must}")


def check_positive_int(name: str, value: object, at_most: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise invalid(name, value, "be a positive integer")
    if at_most is not None and value > at_most:
        raise invalid(name, value, f"be a positive integer of at most {at_most}")
    return value


def check_seconds(name: str, value: object) -> float:
    """A time budget or limit: positive and finite (``nan`` and ``inf`` bound nothing)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
        raise invalid(name, value, "be a positive, finite number of seconds")
    return float(value)


def check_choice(name: str, value: object, choices: Collection[str]) -> str:
    if value not in choices:
        raise invalid(name, value, f"be one of {', '.join(choices)}")
    assert isinstance(value, str)  # one of the choices
    return value
