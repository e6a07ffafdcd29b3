"""Quality: a short seeded campaign on legacy finds every bug class the thread names and
shrinks each to a small case; the same campaign on current finds nothing unexplained.

A case budget and a seed: the same campaign on any machine. A miss here means the
generator or a judge lost its reach.
"""

import pytest

from convcheck import campaign
from convcheck.judges import Judges
from convcheck.known_bugs import LEGACY_BUG_CLASSES, bug_class

pytest.importorskip("torch")
pytestmark = pytest.mark.slow

CASES = {"random": 6144, "atheris": 6144, "hypothesis": 3000}


def run_campaign(revision, seed, engine_name="random"):
    budget = campaign.Budget(cases=CASES[engine_name])
    with Judges(revision, jobs=2) as judges:
        run = campaign.Campaign(judges, budget=budget)
        run.run(engine_name, seed)
        run.minimize_all(
            max_evaluations=300, seconds_each=15, only=lambda f: bug_class(f.signature) is not None
        )
    return run


@pytest.fixture(scope="module", params=["random", "atheris"])
def legacy(request):
    if request.param == "atheris":
        pytest.importorskip("atheris")
    return run_campaign("legacy", seed=7, engine_name=request.param)


@pytest.mark.parametrize("bug", sorted(LEGACY_BUG_CLASSES))
def test_legacy_campaign_finds_and_shrinks(legacy, bug):
    wanted = LEGACY_BUG_CLASSES[bug]
    found = [f for f in legacy.found.values() if f.signature in wanted]
    assert found, f"{bug}: none of {wanted} in {sorted(legacy.found)}"
    case = min((f.case for f in found), key=lambda c: c.input.numel + c.weight.numel)
    assert case.input.numel + case.weight.numel <= 64, case.dumps()
    assert case.input.rank <= 5


def test_current_campaign_finds_nothing_unexplained():
    run = run_campaign("current", seed=7)
    about_kernel = [f.describe() for f in run.found.values() if f.about_kernel]
    assert about_kernel == []
    assert run.stats.cases == CASES["random"]
