"""When two computed outputs are the same answer: tolerances by dtype."""

from __future__ import annotations

import math
from collections.abc import Sequence

# Relative to the larger of the two values (and at least 1): the inputs are small
# integers, so two correct results differ only by accumulation order and rounding.
RELATIVE = {
    "float32": 1e-5,
    "float64": 1e-12,
    "float16": 1e-2,
    "bfloat16": 2e-2,
}


def tolerance(dtype: str) -> float:
    """0.0 for integer and bool outputs: they must be exact."""
    return RELATIVE.get(dtype, 0.0)


def first_difference(
    a: Sequence[float], b: Sequence[float], dtype: str
) -> tuple[int, float, float] | None:
    """The first element where ``a`` and ``b`` differ beyond ``dtype``'s tolerance."""
    if len(a) != len(b):
        return (min(len(a), len(b)), math.nan, math.nan)
    rel = tolerance(dtype)
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        if math.isnan(x) and math.isnan(y):
            continue
        if x == y:
            continue
        if not (math.isfinite(x) and math.isfinite(y)):
            return (i, x, y)
        if abs(x - y) > rel * max(abs(x), abs(y), 1.0):
            return (i, x, y)
    return None
