"""What a judge says about one case: an *outcome*.

``accept(out_sizes[, values])``, ``reject(check)``, ``crash(kind, site)`` or ``hang``.
Every judge (model, native, torch, a user's target) answers in this one type, so the
engine compares like with like. Two more say the answer could not be compared:
``abi_violation(field)``, a target's result outside its ABI (``check`` names the field),
and ``tool_error``, convcheck's own code failed on the case (nothing about the kernel).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from enum import StrEnum
from typing import Any

from convcheck.frozen import frozen


class Verdict(StrEnum):
    """What a judge answered; each value is the string the corpus and the workers use (a
    ``StrEnum``: it compares equal to that string and is written as it)."""

    ACCEPT = "accept"  # the checks passed: output sizes, and values for small calls
    REJECT = "reject"  # a check refused the call: ``check`` names which
    CRASH = "crash"  # the kernel died: ``crash_kind`` (sanitizer or signal), ``crash_site``
    HANG = "hang"  # no answer within the worker's timeout
    ABI_VIOLATION = "abi-violation"  # a result outside the target's ABI: ``check`` the field
    TOOL_ERROR = "tool-error"  # convcheck's own code failed on the case


# The members by their short names, as the modules that compare verdicts import them.
ACCEPT, REJECT, CRASH, HANG, ABI_VIOLATION, TOOL_ERROR = Verdict


@frozen
class Outcome:
    verdict: Verdict
    check: str | None = None
    out_sizes: tuple[int, ...] | None = None
    crash_kind: str | None = None
    crash_site: str | None = None
    values: tuple[float, ...] | None = None  # out in logical (sizes) order, small shapes only
    detail: str = ""  # for people: a torch message, a sanitizer report's first line

    @classmethod
    def accept(
        cls,
        out_sizes: Iterable[int],
        values: tuple[float, ...] | None = None,
        detail: str = "",
    ) -> Outcome:
        return cls(ACCEPT, out_sizes=tuple(out_sizes), values=values, detail=detail)

    @classmethod
    def reject(cls, check: str, detail: str = "") -> Outcome:
        if not detail and cls is Outcome:
            return _rejection(check)
        return cls(REJECT, check=check, detail=detail)

    @classmethod
    def crashed(cls, kind: str, site: str = "", detail: str = "") -> Outcome:
        return cls(CRASH, crash_kind=kind, crash_site=site, detail=detail)

    @classmethod
    def hung(cls, detail: str = "") -> Outcome:
        return cls(HANG, detail=detail)

    @classmethod
    def abi_violation(cls, field: str, detail: str = "") -> Outcome:
        return cls(ABI_VIOLATION, check=field, detail=detail)

    @classmethod
    def tool_error(cls, detail: str = "") -> Outcome:
        return cls(TOOL_ERROR, detail=detail)

    def to_json(self) -> dict[str, Any]:
        crash = None
        if self.verdict == CRASH:
            crash = {"kind": self.crash_kind, "site": self.crash_site}
        return {
            "verdict": self.verdict,
            "check": self.check,
            "out_sizes": None if self.out_sizes is None else list(self.out_sizes),
            "crash": crash,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Outcome:
        crash = data.get("crash") or {}
        sizes = data.get("out_sizes")
        return cls(
            verdict=Verdict(data["verdict"]),
            check=data.get("check"),
            out_sizes=None if sizes is None else tuple(sizes),
            crash_kind=crash.get("kind"),
            crash_site=crash.get("site"),
        )

    # -- comparisons: each says which part of an answer it holds two judges to ----------

    @property
    def category(self) -> str:
        """The part of an outcome a signature keeps: verdict and check id or crash kind."""
        if self.verdict == REJECT:
            return f"reject {self.check}"
        if self.verdict == CRASH:
            return f"crash {self.crash_kind}"
        return self.verdict

    def agrees(self, other: Outcome) -> bool:
        """Fidelity: the same verdict, and the same check id, output sizes or crash kind."""
        return self.category == other.category and (
            self.verdict != ACCEPT or self.out_sizes == other.out_sizes
        )

    def same_answer(self, other: Outcome) -> bool:
        """What a caller of the kernel sees alike: verdict, check id and output sizes (two
        crashes are alike whatever their kind)."""
        return (self.verdict, self.check, self.out_sizes) == (
            other.verdict,
            other.check,
            other.out_sizes,
        )

    def same_verdict(self, other: Outcome) -> bool:
        """Accepts alike with the same sizes, or rejects alike for any reason (two
        implementations word the same rejection with different check ids)."""
        if self.verdict != other.verdict:
            return False
        return self.verdict != ACCEPT or self.out_sizes == other.out_sizes

    def describe(self) -> str:
        if self.verdict == ACCEPT:
            return f"accept {list(self.out_sizes or ())}"
        if self.verdict == REJECT:
            return f"reject {self.check}"
        if self.verdict == CRASH:
            return f"crash {self.crash_kind} at {self.crash_site or '?'}"
        if self.verdict in (ABI_VIOLATION, TOOL_ERROR):
            return f"{self.verdict}: {self.detail or self.check or '?'}"
        return "hang"


@functools.lru_cache(maxsize=512)
def _rejection(check: str) -> Outcome:
    """One value per check id (an outcome is immutable): most model runs reject, and
    building a frozen dataclass of seven fields was most of what that cost. Bounded: a
    target names its checks as it likes."""
    return Outcome(REJECT, check=check)
