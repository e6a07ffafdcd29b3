"""Quality: one bug, one finding. Each single-bug mutant of our own ``current`` kernel
(tests/mutants.py: a wrong operand, a deleted check, a moved bound, an off-by-one in the
loops, a narrowed multiply) is fuzzed as a ``--target`` in a seeded campaign with a case
budget, and we count what the report shows: its rows about the kernel. There must be at
least one (else the mutant proves nothing) and at most two: a bug may show in two ways
(a crash and the wrong values of the calls that survive it), not once per outcome pair,
per dtype, per parameter its helper checks or per check that reads a wrong size.
"""

import pytest
from mutants import MUTANTS, build

from convcheck import campaign, engines
from convcheck.judges import Judges
from convcheck.report import bug_rows

pytest.importorskip("torch")
pytestmark = pytest.mark.slow

CASES = 3000
SEED = 1


def kernel_rows(library: str) -> list[str]:
    """The report's rows about the kernel, each as its finding and the ones it stands for."""
    with Judges("current", target=library, jobs=2) as judges:
        run = campaign.Campaign(judges, budget=campaign.Budget(cases=CASES))
        run.explore(engines.load("random"), SEED)
    return [
        " + ".join(f.key for f in (row.finding, *row.others))
        for row in bug_rows(run)
        if row.finding.about_kernel
    ]


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_one_planted_bug_gives_at_most_two_rows(mutant):
    rows = kernel_rows(str(build(mutant)))
    assert 1 <= len(rows) <= 2, rows


def test_the_unmutated_kernel_gives_none():
    """The mutants' findings are their edits': the same campaign on the kernel as it is
    finds nothing about it."""
    from convcheck.native.build import build_library

    assert kernel_rows(str(build_library("current"))) == []
