"""A target's own check ids, read as convcheck's (the ids of docs/checks.md).

The ABI lets a kernel name its checks as it likes (``E_RANK``, ``conv/bad_stride``). Its
rejections are compared with the model's by id, so a name of its own would read as an
infidelity. Two ways out, chosen per campaign:

* ``--check-map FILE``: a JSON object from the target's ids to ours. A key is the
  target's id, or a regular expression its whole id matches (tried in the file's order
  when no key equals the id); a value is a check id of docs/checks.md::

      {"E_RANK_INPUT": "rank.input", "E_(STRIDE|PADDING)_RANGE": "stride.range"}

* ``--compare verdict``: ids are ignored: a rejection the model also predicts reads as the
  model's (so the intentional differences from torch still apply), and only the verdict,
  the output sizes and the crash kind are compared.

Either way, every id still unknown is counted with the simplest case that produced it and
what the model says there (``IdReader.unknown``), and listed once at the end with the map
the model's readings suggest (``report.describe_unknown``): writing the map takes one look.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from convcheck import files, model, registry
from convcheck.case import Case
from convcheck.errors import ConvcheckError, value_repr
from convcheck.outcome import REJECT, Outcome
from convcheck.simplicity import complexity
from convcheck.validation import check_choice


def ids_of(op: str) -> frozenset[str]:
    """Every check id of ``op``'s steps, both revisions: the model's tables of them."""
    return frozenset(
        check
        for revision in model.REVISIONS
        for checks in model.revision_named(revision, op).checks.values()
        for check in checks
    )


# Every check id of docs/checks.md (tests/engine/test_torch_apart.py holds this equal to
# the document).
CHECK_IDS = ids_of(registry.DEFAULT_OP)

COMPARE = ("id", "verdict")


@dataclass(frozen=True)
class CheckMap:
    """The target's ids to ours: exact ids first, then the patterns in order."""

    exact: dict[str, str]
    patterns: tuple[tuple[re.Pattern, str], ...]

    def translate(self, check: str) -> str | None:
        if check in self.exact:
            return self.exact[check]
        for pattern, ours in self.patterns:
            if pattern.fullmatch(check):
                return ours
        return None


def load_map(path: str | Path) -> CheckMap:
    """The map in ``path``; anything malformed is one ``ConvcheckError`` naming the file
    and the key."""
    where = f"check map {files.shown(path)}"
    data = files.parse_json(files.read_bytes(path, "check map"), where)
    if not isinstance(data, dict) or not data:
        raise ConvcheckError(
            f"{where}: expected a JSON object from the target's ids (or regexes) to check ids "
            'of docs/checks.md, such as {"E_RANK": "rank.input"}'
        )
    patterns = []
    for key, ours in data.items():
        if not isinstance(ours, str) or ours not in CHECK_IDS:
            raise ConvcheckError(
                f"{where}: {key!r} maps to {value_repr(ours)}, which is not a check id of "
                f"docs/checks.md (such as rank.input, stride.range)"
            )
        try:
            patterns.append((re.compile(key), ours))
        except re.error as e:
            raise ConvcheckError(f"{where}: {key!r} is not a regular expression: {e}") from None
    return CheckMap(dict(data), tuple(patterns))


@dataclass
class Unknown:
    count: int
    case: Case  # the simplest that produced the id
    # What the model predicts on those cases: the id the map most likely wants.
    model_says: Counter = field(default_factory=Counter)


@dataclass
class IdReader:
    """Reads a target's rejections as convcheck's ids, counting the ids it cannot read."""

    check_map: CheckMap | None = None
    compare: str = "id"
    known: frozenset[str] = CHECK_IDS
    unknown: dict[str, Unknown] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_choice("compare", self.compare, COMPARE)

    def read(self, outcome: Outcome | None, predicted: Outcome, case: Case) -> Outcome | None:
        """``outcome`` with its check id in our names where the map or the mode can say."""
        if outcome is None or outcome.verdict != REJECT:
            return outcome
        theirs = outcome.check or "?"
        ours = self.check_map.translate(theirs) if self.check_map is not None else None
        if ours is None:
            if theirs not in self.known:
                self._count(theirs, case, predicted)
            if self.compare == "id" or predicted.verdict != REJECT:
                return outcome
            ours = predicted.check
        if ours == theirs:
            return outcome
        detail = f"the target's {theirs}" + (f": {outcome.detail}" if outcome.detail else "")
        return dataclasses.replace(outcome, check=ours, detail=detail)

    def _count(self, check: str, case: Case, predicted: Outcome) -> None:
        seen = self.unknown.setdefault(check, Unknown(0, case))
        seen.count += 1
        seen.model_says[predicted.check if predicted.verdict == REJECT else predicted.verdict] += 1
        if complexity(case) < complexity(seen.case):
            seen.case = case
