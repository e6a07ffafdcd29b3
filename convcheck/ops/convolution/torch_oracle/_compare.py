"""When two computed outputs are the same answer: tolerances by dtype."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

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
    """The first element where ``a`` and ``b`` differ beyond ``dtype``'s tolerance: not
    both NaN, not equal, and either not both finite or further apart than the tolerance
    relative to the larger magnitude (at least 1)."""
    if len(a) != len(b):
        return (min(len(a), len(b)), math.nan, math.nan)
    if a == b:
        return None  # the usual answer, found without converting (NaN never equals)
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        same = (x == y) | (np.isnan(x) & np.isnan(y))
        bound = tolerance(dtype) * np.maximum(np.maximum(np.abs(x), np.abs(y)), 1.0)
        close = np.isfinite(x) & np.isfinite(y) & (np.abs(x - y) <= bound)
    differ = np.flatnonzero(~(same | close))
    if differ.size == 0:
        return None
    i = int(differ[0])
    return (i, float(x[i]), float(y[i]))
