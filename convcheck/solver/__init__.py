"""The solver: the model's own steps run over symbolic integers, every site solved.

``prove(revision)`` explores every path of every shape of call and gives each arithmetic
site a status (witness, proven, unknown); ``band_cases(revision)`` gives the calls whose
exact intermediate values sit just past the C width limits; the solver engine
(``convcheck.engines.solver.explore``) feeds both to a campaign before sampling.
docs/solver.md says what "proven" means.
"""

from convcheck.solver.bands import band_cases
from convcheck.solver.prove import (
    ProofReport,
    SiteReport,
    format_report,
    judge_witnesses,
    prove,
)

__all__ = [
    "ProofReport",
    "SiteReport",
    "band_cases",
    "format_report",
    "judge_witnesses",
    "prove",
]
