"""The legacy model agrees with ExecuTorch 1.5.1 on generated cases: verdict, check id,
out sizes and crash kind, once ``expected_outcome`` has made the model's sanitized
answer an unsanitized one.

The model's legacy revision is a reading of ExecuTorch's kernel source; this is the
kernel itself, built by someone else, on the same cases. A disagreement means the model
(or our reading of ExecuTorch) is wrong; the message has the case's JSON for
``convcheck explain``.
"""

import collections

import pytest
from agreement import unexpected

from convcheck.generate import random_cases

pytest.importorskip(
    "executorch", reason="pip install executorch==1.5.1 --no-deps flatbuffers ruamel.yaml tabulate"
)

from convcheck.ops.convolution.executorch_target import expected_outcome  # noqa: E402
from convcheck.ops.convolution.executorch_target._plan import Limits, make_plan  # noqa: E402

SEED = 2020
# Small cases run whole (values, over-reads); the others reach the edges (and probes).
CASES = random_cases(SEED, 300, small=True) + random_cases(SEED, 100)


@pytest.fixture(scope="module")
def judged(judge):
    return list(zip(CASES, judge.run(CASES), strict=True))


def test_executorch_agrees_with_the_legacy_model(judged):
    bad, example = unexpected(judged, expected_outcome)
    assert not bad, f"model vs executorch: {dict(bad)}; first cases: {example}"


def test_the_cases_reach_every_kind_of_answer(judged):
    kinds = collections.Counter(actual.category for _, actual in judged)
    checks = {k for k in kinds if k.startswith("reject")}
    assert kinds["accept"] > 50
    assert len(checks) >= 15, sorted(checks)
    assert kinds["crash bias-overread (values)"] >= 3
    assert kinds["crash SIGFPE"] >= 1
    assert sum(not make_plan(case, Limits()).whole for case, _ in judged) >= 5  # probes


def test_accepted_small_cases_come_with_their_values(judged):
    for case, actual in judged:
        if actual.verdict == "accept" and make_plan(case, Limits()).whole:
            numel = 1
            for s in actual.out_sizes:
                numel *= s
            if numel <= Limits().max_values:
                assert actual.values is not None and len(actual.values) == numel, case.dumps()
            else:
                assert actual.values is None
