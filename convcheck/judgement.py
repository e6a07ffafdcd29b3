"""A ``Judgement``: every judge's answer for one case, what ``convcheck.findings`` reads.

The judges (``convcheck.judges``) fill it in; the findings are its disagreements.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from convcheck import model
from convcheck.case import Case
from convcheck.model import ModelFinding, ModelRun
from convcheck.outcome import Outcome

if TYPE_CHECKING:
    from convcheck.torch_mapping import TorchVerdict


@dataclass
class Judgement:
    """Every judge's answer for one case."""

    case: Case
    revision: str
    model: ModelRun
    exact: ModelRun
    model_findings: list[ModelFinding]
    native_check: Outcome | None = None
    native_run: Outcome | None = None
    torch: TorchVerdict | None = None
    # What the kernel should answer when that is not the model's sanitized prediction:
    # the ExecuTorch target (no sanitizers; it only runs whole).
    expected: Outcome | None = None
    # The op has no kernel of its own here (no C kernel, no target): the model's
    # prediction stands for it where torch's answer is compared with the kernel's.
    model_is_kernel: bool = False
    # False when the native judge never answered (a deadline or a stop cut the batch
    # short): such a judgement is no evidence either way, and yields no findings.
    complete: bool = True
    # When the last judge's answer for this case was in (``time.monotonic()``): a
    # finding's time is its own case's, not its batch's end.
    judged_at: float = 0.0

    @property
    def kernel(self) -> Outcome | None:
        """What the kernel under test did: the run entry's answer when it ran."""
        return self.native_run or self.native_check

    def predicted(self, with_loops: bool) -> Outcome:
        """What the kernel should answer: the model's sanitized prediction, unless a
        target of its own says otherwise (``expected``)."""
        return self.expected or model.predict(self.model, with_loops)

    def outcomes(self) -> dict[str, Outcome]:
        found = {"model": self.model.outcome, "exact": self.exact.outcome}
        if self.native_check is not None:
            found["native"] = self.native_check
        if self.native_run is not None:
            found["native_run"] = self.native_run
        if self.torch is not None:
            found["torch"] = self.torch.outcome
        return found
