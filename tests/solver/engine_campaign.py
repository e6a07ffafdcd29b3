"""A campaign as an engine sees it, without judges: what the engine submits, recorded."""

from __future__ import annotations


class EngineCampaign:
    """A budget of ``cases``; ``deadline`` is what the engine is told of the time budget
    (None: none), while the case budget alone decides when the campaign is exhausted."""

    def __init__(self, revision: str, cases: int, deadline: float | None = None) -> None:
        self.judges = type("J", (), {"revision": revision, "stopped": False, "op": "convolution"})()
        self.deadline = deadline
        self.shards = None  # the engine makes its own cases
        self.left = cases
        self.batches: list[list] = []

    @property
    def exhausted(self) -> bool:
        return self.left <= 0

    def room(self, wanted: int) -> int:
        return min(wanted, self.left)

    batch = room

    def submit(self, cases) -> None:
        self.batches.append(list(cases))
        self.left -= len(cases)

    @property
    def submitted(self) -> list:
        return [case for batch in self.batches for case in batch]
