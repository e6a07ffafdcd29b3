"""What "simpler" means for a case: one order, for every place that keeps the simplest.

A case is simpler when its tensors hold fewer elements and dims and its integers are
smaller (``complexity``); where two cases tie, a choice that must not depend on the
order they came in (a merge of corpora) breaks the tie by the case's JSON (``sort_key``),
and a campaign by which came first.
"""

from __future__ import annotations

from convcheck.case import Case


def complexity(case: Case) -> int:
    """Bigger tensors, more dims and larger integers make a case harder to read."""
    tensors = case.tensors()
    ints = case.integers()
    return (
        sum(t.numel for t in tensors)
        + 4 * sum(t.rank for t in tensors)
        + sum(abs(v).bit_length() for v in ints)
    )


def sort_key(case: Case) -> tuple[int, str]:
    """``complexity``, then the JSON text: the same order whatever order cases come in."""
    return complexity(case), case.dumps()
