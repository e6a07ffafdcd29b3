"""A seeded campaign of the model alone (model and exact arithmetic: no kernel, no torch)
on one op, as the ops' own tests run it, and the bug class each finding shows."""

from convcheck import engines, registry
from convcheck.campaign import Budget, Campaign
from convcheck.judges import Judges


def campaign(op, revision, cases=3000, seed=1):
    """Every finding, minimised, by its key."""
    with Judges(revision, op=op, use_native=False, use_torch=False) as judges:
        run = Campaign(judges, budget=Budget(cases=cases))
        run.explore(engines.load("random"), seed)
        run.minimize_all()
        return {f.key: f for f in run.found.values()}


def classes(op, found):
    """Each finding's class by its key; a finding of no known class is a test failure."""
    named = {key: registry.get(op).bug_class(f.signature) for key, f in found.items()}
    assert None not in named.values(), named
    return named


def predicted_crashes(op, revision, cases=3000, seed=1):
    """The classes of the crashes the model predicts for a sanitized kernel (with the
    loops: the run entry) on ``cases`` small generated calls; None for a crash of no
    known class."""
    from convcheck import model
    from convcheck.generate import RandomSource

    the_op, src = registry.get(op), RandomSource(seed)
    found = set()
    for _ in range(cases):
        case = the_op.build_case(src, small=True)
        outcome = model.predict(model.run(case, revision), with_loops=True)
        if outcome.verdict == "crash":
            site = model.site_family(outcome.crash_site)
            found.add(the_op.bug_class(("crash", outcome.crash_kind, site)))
    return found
