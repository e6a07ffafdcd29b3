"""How large a call a native ``run`` computes values for."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RunLimits:
    """Above these, a ``run`` request is answered like a ``check`` (``ran`` false).

    They keep a run's memory and time small: the values are for small shapes, and a
    kernel that takes long on a large but valid call is not a hang worth reporting.
    ``max_work`` bounds the op's own estimate of its loops' steps (its call unit's, or
    its Python worker's).
    """

    max_tensor_elements: int = 1 << 20
    max_out_elements: int = 1 << 16
    max_work: int = 1 << 24
