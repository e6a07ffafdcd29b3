"""The model and the C kernel agree: verdict, check id, out sizes, and where they crash.

Two independent implementations of docs/checks.md, one in Python over fixedint, one in C
under ASan and UBSan, on the same generated cases. A disagreement means one of them is
wrong; the message shows the case so `convcheck explain` can say which.
"""

import collections

import pytest
from agreement import disagreements

from convcheck import model
from convcheck.generate import random_cases
from convcheck.judges import is_small
from convcheck.native import NativeJudge

CASES_PER_REVISION = 20_000


@pytest.fixture(scope="module", params=sorted(model.REVISIONS))
def judged(request):
    revision = request.param
    cases = random_cases(seed=1234, count=CASES_PER_REVISION)
    with NativeJudge(revision, jobs=2) as judge:
        checked = judge.check(cases)
        pairs = list(zip(cases, checked, strict=True))
        small = [c for c, o in pairs if o.verdict == "accept" and is_small(c)]
        ran = judge.run(small)
    return revision, pairs, list(zip(small, ran, strict=True))


def test_check_entry_agrees_with_the_model(judged):
    revision, checked, _ = judged
    bad, example = disagreements(revision, checked, with_loops=False)
    assert not bad, f"{revision}: {dict(bad)}; first cases: {example}"


def test_run_entry_agrees_with_the_model(judged):
    revision, _, ran = judged
    bad, example = disagreements(revision, ran, with_loops=True)
    assert not bad, f"{revision}: {dict(bad)}; first cases: {example}"
    assert len(ran) > 500  # the generator must reach the loops often enough to mean something


def test_the_cases_reach_every_verdict(judged):
    revision, checked, _ = judged
    verdicts = collections.Counter(o.verdict for _, o in checked)
    checks = {o.check for _, o in checked if o.verdict == "reject"}
    assert verdicts["accept"] > 1000
    assert len(checks) >= 20, sorted(checks)
    if revision == "legacy":
        crash_kinds = {o.crash_kind for _, o in checked if o.verdict == "crash"}
        assert {"division-by-zero", "signed-integer-overflow"} <= crash_kinds
