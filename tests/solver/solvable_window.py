"""The toy window op (``tests/ops/window_op.py``) with the one thing the solver asks of an
op besides its steps: the shapes of its calls. Nothing else of the solver is told."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from convcheck.registry import TensorSkeleton

sys.path.insert(0, str(Path(__file__).parents[1] / "ops"))
from window_op import Window  # noqa: E402


@dataclass(frozen=True)
class WindowShape:
    rank: int

    op = "solvable_window"
    kind = "window"
    work = ()

    @property
    def key(self) -> str:
        return str(self.rank)

    def skeleton(self) -> dict:
        return {
            "input": TensorSkeleton(self.rank),
            "out": TensorSkeleton(self.rank),
            "kernel_size": 1,
            "stride": 1,
        }

    def describe(self) -> str:
        return f"rank {self.rank} window"


class SolvableWindow(Window):
    name = "solvable_window"

    @staticmethod
    def solver_shapes(revision: str, ranks=None) -> list[WindowShape]:
        return [WindowShape(rank) for rank in ranks or (3,)]

    @staticmethod
    def default_ranks(revision: str) -> tuple[int, ...]:
        return (3,)

    @staticmethod
    def seed_shapes(revision: str) -> tuple[WindowShape, ...]:
        return (WindowShape(3),)


OP = SolvableWindow()
