"""Targets: the kernels under test, found through one registry like the engines'.

``--target`` says which: nothing for convcheck's own C kernel of the revision, a path for
a user's library of the same C ABI, or a name of ``TARGETS`` (``executorch``), or a name
ending in ``:`` followed by where its sources are (``executorch-source:DIR``).

The registry maps a name to the module that starts it (imported only when used): its
``unavailable(revision)`` says why it cannot judge that revision here ("" when it can),
and ``start(where, revision, jobs, timeout)`` returns the ``Started`` target. Adding a
target is one line here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from convcheck.errors import ConvcheckError
from convcheck.ops import DEFAULT_OP

if TYPE_CHECKING:
    from convcheck.case import Case
    from convcheck.outcome import Outcome

# name (or prefix, ending in ":") -> the module that starts it
TARGETS: dict[str, str] = {
    "executorch": "convcheck.ops.convolution.executorch_target.judge",
    "executorch-source:": "convcheck.ops.convolution.executorch_source.judge",
}
# Every other target: convcheck's own kernel, or the library at the target's path.
LIBRARY = "convcheck.native.judge"


class Target(Protocol):
    """A kernel under test (convcheck's own build, ExecuTorch, a user's checkout): each
    case's outcome, None for a case left unjudged at ``deadline`` or by ``cancel``."""

    def check(self, cases: Sequence[Case], deadline: float | None = None) -> list[Outcome | None]:
        """The checks alone: the verdict and the output sizes."""
        ...

    def run(self, cases: Sequence[Case], deadline: float | None = None) -> list[Outcome | None]:
        """The checks, then the computation: values for small accepted cases."""
        ...

    def cancel(self) -> None: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class Started:
    """A target at work, and what the judges need to know of it."""

    judge: Target
    # What the kernel should answer, where that is not the model's sanitized prediction
    # (a target without sanitizers, that only runs whole); None: the model's.
    expected: Callable[[Any], Outcome] | None = None  # of the op's case
    # The target's own check ids that its log map reads, beside convcheck's.
    check_ids: frozenset[str] = frozenset()


def _module(target: str | None) -> tuple[str, str | None]:
    """The module that starts ``target``, and what the target says of where it is."""
    if target is not None:
        for name, module in TARGETS.items():
            if name.endswith(":") and target.startswith(name):
                return module, target.removeprefix(name)
            if target == name:
                return module, None
    return LIBRARY, target


def unavailable(target: str | None, revision: str) -> str:
    """Why ``target`` cannot judge ``revision`` here, or "" when it can."""
    module, _ = _module(target)
    why: str = importlib.import_module(module).unavailable(revision)
    return why


def start(
    target: str | None, revision: str, jobs: int, timeout: float, op: str = DEFAULT_OP
) -> Started:
    """``target``'s judge of ``op``'s calls, started; a ConvcheckError saying why when it
    cannot run here."""
    module, where = _module(target)
    why = unavailable(target, revision)
    if why:
        raise ConvcheckError(why)
    starter = importlib.import_module(module).start
    # The library target judges any op with a native kernel; the others are one op's.
    extra = {"op": op} if module == LIBRARY else {}
    started: Started = starter(where, revision, jobs, timeout, **extra)
    return started
