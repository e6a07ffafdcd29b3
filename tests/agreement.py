"""How a kernel's answers are held to the model's: the disagreements, counted by kind."""

import collections

from convcheck import model


def disagreements(revision, pairs, with_loops):
    """The (case, kernel outcome) pairs whose outcome the model does not predict, counted
    by (predicted, actual) category, with the first case of each; ``with_loops`` for the
    run entry's outcomes."""
    bad = collections.Counter()
    example = {}
    for case, actual in pairs:
        if with_loops and actual.verdict == "accept" and actual.values is None:
            continue  # too large to run: the check entry already compared it
        predicted = model.predict(model.run(case, revision), with_loops)
        if not predicted.agrees(actual):
            key = (predicted.category, actual.category)
            bad[key] += 1
            example.setdefault(key, case.dumps())
    return bad, example


def unexpected(judged, expected_outcome):
    """The (case, outcome) pairs of a target that runs unsanitized (ExecuTorch's wheel)
    whose outcome is not ``expected_outcome(case)``, as ``disagreements`` counts them; the
    example of each names the target's detail too."""
    bad = collections.Counter()
    example = {}
    for case, actual in judged:
        expected = expected_outcome(case)
        if not expected.agrees(actual):
            key = (expected.category, actual.category)
            bad[key] += 1
            example.setdefault(key, f"{case.dumps()} ({actual.detail})")
    return bad, example
