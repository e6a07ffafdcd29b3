"""An op's torch mapping: what the core asks of the torch judge an op brings.

The torch judge is the op's own (convolution's calls ATen's ``convolution``, checks its
Python check path, normalises torch's messages to check ids): the core only starts it,
hands it cases and reads its verdicts, through the two protocols here. An op says how
to make its judge and which of its differences from torch are intentional with a
``TorchMapping`` (``convcheck.registry.Op.torch``); an op without one is judged without torch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from convcheck.outcome import Outcome

__all__ = [
    "CheckPathJudge",
    "CheckPathVerdict",
    "Explain",
    "TorchJudge",
    "TorchMapping",
    "TorchVerdict",
]


class TorchVerdict(Protocol):
    """What torch answers on one case, as the judges and the findings read it."""

    @property
    def outcome(self) -> Outcome:
        """torch's answer as configured (the one compared with the kernel's)."""
        ...

    @property
    def no_onednn(self) -> Outcome | None:
        """torch's answer down its other path (oneDNN disabled), None when not asked:
        where the two differ, the difference is torch's own bug."""
        ...

    @property
    def onednn_skipped(self) -> bool:
        """True when a campaign sampled the other path's call away and ``outcome`` stands
        for both: a finding against torch on it is confirmed by making that call."""
        ...

    @property
    def torch_bug(self) -> str | None:
        """Why torch's own answers disagree (a ``torch-bug`` finding), or None."""
        ...

    @property
    def path(self) -> str:
        """``"real"`` (torch computed the call) or ``"checks"`` (its check path only)."""
        ...

    @property
    def complete(self) -> bool:
        """False when a deadline cut the real calls short: no evidence either way."""
        ...

    def describe(self) -> str: ...

    def to_json(self) -> dict[str, Any]: ...


class TorchJudge(Protocol):
    """An op's torch judge, started by ``TorchMapping.judge`` and closed by the judges."""

    @property
    def torch_version(self) -> str: ...

    def start(
        self,
        cases: Sequence[Any],
        *,
        compute_rejected: bool = True,
        deadline: float | None = None,
        matters: Callable[[int, Any], bool] | None = None,
    ) -> Callable[[], Sequence[TorchVerdict]]:
        """The check path now, the real calls sent to workers; returns the function that
        waits for them and gives one verdict per case, in order. ``compute_rejected=False``
        leaves to the check path the calls it rejects; real calls still running at
        ``deadline`` are abandoned (their verdicts incomplete); ``matters(index,
        check_path_verdict)`` says whether a case's real calls can change a finding."""
        ...

    def predict(self, case: Any) -> TorchVerdict:
        """The check path's verdict alone: no worker, no computation."""
        ...

    def cancel(self) -> None: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class CheckPathVerdict:
    """torch's answer from a check path alone: one path, no real call, nothing computed.
    ``source`` names the path in a report."""

    outcome: Outcome
    source: str = "torch (check path)"
    torch_bug: str | None = None
    no_onednn: Outcome | None = None
    onednn_skipped: bool = False
    path: str = "checks"
    complete: bool = True

    def describe(self) -> str:
        return f"{self.source}: {self.outcome.describe()}"

    def to_json(self) -> dict[str, Any]:
        return {"outcome": self.outcome.to_json(), "path": self.path}


class CheckPathJudge:
    """A torch judge that answers every case from a check path, in this process, at
    once: a subclass gives ``torch_version`` and ``predict``."""

    torch_version: str

    def start(
        self, cases: Sequence[Any], **options: Any
    ) -> Callable[[], Sequence[CheckPathVerdict]]:
        """Every case's verdict, now: a check path computes nothing, so the options of
        the real calls (``TorchJudge.start``'s) do not apply."""
        verdicts = [self.predict(case) for case in cases]
        return lambda: verdicts

    def predict(self, case: Any) -> CheckPathVerdict:
        raise NotImplementedError

    def cancel(self) -> None:
        pass

    def close(self) -> None:
        pass


# The intentional differences: (the op's case, revision, kernel's outcome, torch's
# outcome, torch's whole verdict) -> a truthy value (the difference, with its reason) when
# one explains why the kernel and torch disagree.
Explain = Callable[[Any, str, "Outcome", "Outcome", Any], object]


def _installed() -> bool:
    return True


@dataclass(frozen=True)
class TorchMapping:
    """How an op is judged by torch.

    ``judge(jobs=, timeout=, warm=)`` starts the op's torch judge (``warm``: start its
    workers at once); ``explain`` names the intentional differences (None: there are
    none); ``available()`` says whether what the judge needs is installed, and
    ``install`` how to install it, for the one-line error when it is not.
    """

    judge: Callable[..., TorchJudge]
    explain: Explain | None = None
    available: Callable[[], bool] = _installed
    install: str = "pip install torch"
