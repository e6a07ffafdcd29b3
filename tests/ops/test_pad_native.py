"""constant_pad_nd's own C kernel (``convcheck/ops/constant_pad_nd/native``), judged
through the generic C worker: it answers as the model does on the same generated calls,
current's values are torch's padding of the inputs every judge is given, legacy's walk
differs from it exactly where its loops assume a contiguous layout, and legacy's
arithmetic bugs crash the sanitized build where issue 30 says they do."""

import collections

import pytest
from agreement import disagreements
from pad_builders import CL, pad, padded

from convcheck import engines
from convcheck.campaign import Budget, Campaign
from convcheck.generate import random_cases
from convcheck.judges import Judges, is_small
from convcheck.native import NativeJudge

OP = "constant_pad_nd"
CASES_PER_REVISION = 20_000


@pytest.fixture(scope="module", params=["legacy", "current"])
def judged(request):
    revision = request.param
    cases = random_cases(seed=30, count=CASES_PER_REVISION, op=OP)
    with NativeJudge(revision, op=OP, jobs=2) as judge:
        checked = list(zip(cases, judge.check(cases), strict=True))
        small = [c for c, o in checked if o.verdict == "accept" and is_small(c)]
        ran = list(zip(small, judge.run(small), strict=True))
    return revision, checked, ran


def test_its_check_entry_answers_as_the_model(judged):
    revision, checked, _ = judged
    bad, example = disagreements(revision, checked, with_loops=False)
    assert not bad, f"{revision}: {dict(bad)}; first cases: {example}"
    verdicts = collections.Counter(o.category for _, o in checked)
    assert verdicts["accept"] > 5000 and len(verdicts) >= 9, verdicts


def test_its_run_entry_answers_as_the_model(judged):
    revision, _, ran = judged
    bad, example = disagreements(revision, ran, with_loops=True)
    assert not bad, f"{revision}: {dict(bad)}; first cases: {example}"
    assert sum(o.values is not None for _, o in ran) > 5000
    if revision == "legacy":  # its loops' guards refuse some calls the checks passed
        assert any(o.verdict == "reject" for _, o in ran)


VALUE_CASES = [
    pad(2, 3),
    pad(2, 3, pad=(0, 2, 1, 0), value=7),
    pad(1, 2, 3, 4, pad=(1, 0, 2, 1, 0, 1), value=-3),
    pad(3, pad=(), value=5),
    pad(2, 0, 3, pad=(1, 1)),
    pad(4, 5, pad=(2, 2), dtype="int64", value=-9),
    pad(3, 3, pad=(1, 1, 1, 1), dtype="uint8", value=-255),
    pad(2, 2, pad=(1, 0), dtype="bool", value=3),
    pad(2, 3, pad=(1, 2), dtype="float16", value=11),
    pad(1, 2, 3, 3, pad=(1, 1, 0, 2), order=CL, value=4),
]


def test_current_pads_as_torch_does():
    with NativeJudge("current", op=OP) as judge:
        ran = judge.run(VALUE_CASES)
    for case, outcome in zip(VALUE_CASES, ran, strict=True):
        assert outcome.values == padded(case), case.dumps()


def test_legacy_pads_as_torch_does_but_channels_last():
    """Its loops step through input and out by the products of the sizes inside each
    dim: right for a contiguous layout, the wrong elements for a channels-last one."""
    with NativeJudge("legacy", op=OP) as judge:
        ran = judge.run(VALUE_CASES)
    for case, outcome in zip(VALUE_CASES, ran, strict=True):
        contiguous = case.input.order == tuple(range(case.input.rank))
        assert (outcome.values == padded(case)) == contiguous, case.dumps()


# Each legacy class the sanitized kernel crashes on, by hand: the issue's [2^62, 2^62],
# and an out whose int32 strides overflow (2 x 2^30 x 1 padded to 2 x 2^30 x 2: its
# outer stride is 2^31).
HAND_WITNESSES = {
    "pad sum overflow": pad(1, pad=(2**62, 2**62)),
    "out strides past int32": pad(2, 2**30, 1, pad=(0, 1)),
}


def test_each_legacy_crash_class_has_a_hand_minimal_witness():
    from convcheck.ops.constant_pad_nd.known_bugs import LEGACY_BUG_CLASSES, bug_class

    crashing = {
        name
        for name, signatures in LEGACY_BUG_CLASSES.items()
        if any(signature[0] == "crash" for signature in signatures)
    }
    assert set(HAND_WITNESSES) == crashing
    witnesses = list(HAND_WITNESSES.items())
    with Judges("legacy", op=OP, use_torch=False) as judges:
        judgements = judges.judge([case for _, case in witnesses])
        for (name, _), judgement in zip(witnesses, judgements, strict=True):
            found = [f for f in judges.findings(judgement) if f.kind == "crash"]
            assert [bug_class(f.signature) for f in found] == [name], found


def campaign(revision, cases, seed):
    """The full pipeline: the model, our C kernel, torch's check path."""
    with Judges(revision, op=OP) as judges:
        run = Campaign(judges, budget=Budget(cases=cases))
        run.explore(engines.load("random"), seed)
        run.minimize_all()
        return [f for f in run.found.values() if f.about_kernel]


def test_a_legacy_campaign_finds_every_class_once():
    from convcheck.ops.constant_pad_nd.known_bugs import LEGACY_BUG_CLASSES, bug_class

    found = campaign("legacy", 3000, seed=1)
    classes = [bug_class(f.signature) for f in found]
    # Every class, and none unnamed (a class may show in several signatures: a crash and
    # its ordering).
    rows = collections.Counter(classes)
    assert set(rows) == set(LEGACY_BUG_CLASSES), rows


def test_a_current_campaign_finds_nothing_of_the_kernels():
    assert campaign("current", 6000, seed=3) == []
