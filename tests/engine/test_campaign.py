"""The campaign's own bookkeeping: batch sizes, each finding's time, what is minimised,
and the atheris engine's seeds."""

from types import SimpleNamespace

import pytest

from convcheck import engines, registry
from convcheck.campaign import FIRST_BATCH, Budget, Campaign
from convcheck.findings import Finding, FindingKind


class StubJudges:
    """Judges that answer at once: case ``n`` of the campaign is "judged" at time
    ``1000 + n`` and shows a finding when ``n`` is in ``findings_at``."""

    revision, target, stopped, op = "legacy", None, False, "convolution"

    def __init__(self, findings_at=()):
        self.findings_at = set(findings_at)
        self.batches: list[int] = []
        self.judged = 0

    def judge(self, cases, thrifty=None, deadline=None):
        self.batches.append(len(cases))
        out = []
        for case in cases:
            out.append(SimpleNamespace(case=case, n=self.judged, complete=True))
            out[-1].judged_at = 1000.0 + self.judged
            self.judged += 1
        return out

    def findings(self, j):
        if j.n not in self.findings_at:
            return []
        kind = FindingKind.TORCH_BUG if j.n % 2 else FindingKind.OVERFLOW
        return [Finding(kind, (kind.value, f"site{j.n}"), j.case, {})]


def test_the_first_batches_are_small_and_double_up_to_the_engines_size():
    from convcheck.engines import random as random_engine

    judges = StubJudges()
    # Sampling alone: the solver's cases, judged first, end with a batch of what is left.
    random_engine.explore(Campaign(judges, budget=Budget(cases=700)), 1, solved=False)
    assert judges.batches[:6] == [FIRST_BATCH * 2**i for i in range(6)] == [8, 16, 32, 64, 128, 256]
    assert judges.batches[6:] == [700 - 504]  # the rest of the case budget


def test_each_finding_is_timed_by_its_own_case_not_its_batch():
    # Cases 3 and 20 are in the first and second batches (8, then 16 cases).
    judges = StubJudges(findings_at={3, 20})
    run = Campaign(judges, budget=Budget(cases=24))
    run.stats.started = 1000.0
    run.explore(engines.load("random"), 1)
    assert sorted(run.stats.first_found.values()) == [3.0, 20.0]


def test_torch_bugs_are_left_as_found_unless_asked():
    judges = StubJudges(findings_at={1})
    run = Campaign(judges, budget=Budget(cases=8))
    run.explore(engines.load("random"), 1)
    [key] = run.found
    assert run.found[key].kind == FindingKind.TORCH_BUG
    run.minimize_all()
    assert key not in run.minimized


@pytest.mark.parametrize("revision", ["legacy", "current"])
def test_atheris_starts_from_valid_calls_that_show_no_finding(revision):
    """Seeded with a bug's reproducer, a fuzzer's time to find that bug is a replay."""
    pytest.importorskip("torch")
    from convcheck.judges import Judges

    seeds = list(registry.get().valid_cases())
    assert len({c.input.rank for c in seeds}) == 2 and any(c.transposed for c in seeds)
    with Judges(revision, jobs=1) as judges:
        judged = judges.judge(seeds)
    for j in judged:
        assert j.kernel.verdict == j.torch.outcome.verdict == "accept", j.case.dumps()
        assert judges.findings(j) == [], j.case.dumps()


def test_the_seeds_are_not_the_bundled_examples():
    from convcheck.campaign import example_cases

    examples = {registry.loads_case(p.read_text()) for p in example_cases()}
    assert not examples & set(registry.get().valid_cases())
