"""Hypothesis strategies for an op's calls, for convcheck's tests and for yours.

    from hypothesis import given
    from convcheck.strategies import cases

    @given(cases())
    def test_my_kernel_never_crashes(case): ...

The construction is the op's ``build_case``; these strategies only let
Hypothesis make its choices, so it can replay and shrink them.
"""

from __future__ import annotations

from hypothesis import strategies as st

from convcheck import registry
from convcheck.validation import invalid

__all__ = ["cases"]


class _DrawSource:
    def __init__(self, draw) -> None:
        self._draw = draw

    def integer(self, low: int, high: int) -> int:
        return self._draw(st.integers(low, high))

    def choice(self, options: tuple):
        return self._draw(st.sampled_from(options))

    def chance(self, p: float) -> bool:
        # Shrinks toward True: draws of 0 are "the likely branch".
        return self._draw(st.integers(0, 999)) < p * 1000


@st.composite
def _cases(draw, small: bool, op: str):
    return registry.get(op).build_case(_DrawSource(draw), small)


def cases(small: bool = False, op: str = registry.DEFAULT_OP) -> st.SearchStrategy:
    """Calls of ``op`` biased to the edges of the checks; ``small=True`` keeps tensors
    computable."""
    from hypothesis.errors import InvalidArgument

    # Hypothesis's exception, in convcheck's wording (``convcheck.validation``).
    if not isinstance(small, bool):
        raise InvalidArgument(str(invalid("small", small, "be True or False")))
    if op not in registry.names():
        raise InvalidArgument(str(invalid("op", op, f"be one of {', '.join(registry.names())}")))
    return _cases(small, op)
