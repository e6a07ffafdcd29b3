"""The Hypothesis engine: Hypothesis drives the same construction, a failure per signature.

Hypothesis tells failures apart by exception type and location, shrinks each, and
reports them together. Giving every signature its own subclass of ``NewFinding`` makes
"distinct bug" mean exactly what the campaign means by it. The campaign has already kept
each finding when the property fails, so nothing is lost if the budget ends before
shrinking does; the property runs again with new seeds until the budget is spent.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed

from convcheck.strategies import cases

if TYPE_CHECKING:
    from convcheck.campaign import Campaign


class NewFinding(Exception):
    """A signature this run of the property had not raised before."""


class _Spent(BaseException):
    """The budget is spent: a BaseException, so Hypothesis stops instead of shrinking it."""


_CLASSES: dict[str, type[NewFinding]] = {}


def exception_for(key: str) -> type[NewFinding]:
    if key not in _CLASSES:
        name = "Finding_" + hashlib.sha1(key.encode()).hexdigest()[:10]
        _CLASSES[key] = type(name, (NewFinding,), {"__doc__": key})
    return _CLASSES[key]


def explore(campaign: Campaign, seed: int) -> None:
    round_seed = seed
    try:
        while not campaign.exhausted:
            run_property(campaign, round_seed)
            round_seed += 1
    except _Spent:
        pass


def run_property(campaign, seed: int) -> None:
    """One Hypothesis run: generate until a new signature, shrink it, report it."""
    raised = set(campaign.found)

    @hypothesis_seed(seed)
    @settings(
        max_examples=1_000_000,
        deadline=None,
        database=None,
        phases=(Phase.generate, Phase.shrink),
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=True,
    )
    @given(cases(op=campaign.judges.op))
    def distinct_findings(case):
        if campaign.exhausted:
            raise _Spent
        for finding in campaign.submit([case])[0]:
            if finding.key not in raised:
                raise exception_for(finding.key)(finding.describe())

    try:
        distinct_findings()
    except NewFinding:
        pass
    except BaseExceptionGroup as group:
        _, rest = group.split((NewFinding, _Spent))
        if rest is not None:
            raise rest from None
