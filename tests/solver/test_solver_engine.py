"""``fuzz --engine solver --revision legacy``: every known bug class before any sampled case."""

import pytest

pytest.importorskip("z3")

from convcheck import engines
from convcheck.campaign import Budget, Campaign  # noqa: E402
from convcheck.ops.convolution.known_bugs import LEGACY_BUG_CLASSES, bug_class  # noqa: E402

SAMPLED = 64  # sampled cases after the solver's: the campaign must go on to sample


class _Recording(Campaign):
    """Notes, for each finding, how many cases had been judged when it was first kept."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.found_at: dict[str, int] = {}

    def submit(self, cases):
        per_case = super().submit(cases)
        for key in self.found:
            self.found_at.setdefault(key, self.stats.cases)
        return per_case


@pytest.mark.slow  # solving legacy (sites, bands, against torch): 13 minutes at load 6
def test_every_legacy_class_is_found_before_any_sampled_case():
    pytest.importorskip("torch")
    from convcheck.engines.solver import first_cases
    from convcheck.judges import Judges

    solved = len(first_cases("legacy"))
    with Judges("legacy", use_torch=True) as judges:
        campaign = _Recording(judges, budget=Budget(seconds=None, cases=solved + SAMPLED))
        campaign.explore(engines.load("solver"), seed=0)
    assert campaign.stats.cases == solved + SAMPLED  # the sampling came after them
    # A batch holds the solver's cases or sampled ones, never both: a finding noted at
    # ``solved`` cases or fewer came from a solver's case.
    first: dict[str, int] = {}
    for key, at in campaign.found_at.items():
        name = bug_class(campaign.found[key].signature)
        if name is not None:
            first[name] = min(at, first.get(name, at))
    late = {
        name: first.get(name) for name in LEGACY_BUG_CLASSES if first.get(name, solved + 1) > solved
    }
    assert late == {}, f"after the {solved} solver cases (None: never): {late}"
    negative = [
        at
        for key, at in campaign.found_at.items()
        if campaign.found[key].signature == ("missing-check", "groups.nonpos")
        and campaign.found[key].case.groups < 0
    ]
    assert negative and min(negative) <= solved, "negative groups accepted: not before sampling"
