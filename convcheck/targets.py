"""Targets: the kernels under test, found through one registry like the engines'.

``--target`` says which: nothing for convcheck's own C kernel of the revision, a path for
a user's library of the same C ABI, or a name among the op's targets (``Op.targets``:
convolution's ``executorch``), or a name ending in ``:`` followed by where its sources
are (``executorch-source:DIR``).

An op's registry maps a name to the module that starts it (imported only when used):
its ``unavailable(revision)`` says why it cannot judge that revision here ("" when it
can), and ``start(where, revision, jobs, timeout, op)`` returns the ``Started`` target
(``op`` for a module that starts more than one op's). A
target built from sources (a name ending in ``:``) has ``build(where)`` too, which builds
it and returns its library (``convcheck target``). Adding a target is one line in its
op's ``targets``.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from convcheck import registry
from convcheck.errors import ConvcheckError

if TYPE_CHECKING:
    from convcheck.case import Case
    from convcheck.outcome import Outcome

# Every target no op names: convcheck's own kernel, or the library at the target's path.
LIBRARY = "convcheck.native.judge"
# What a library's file name ends with; any other target without a directory in it is a
# name, which must be one of the op's.
LIBRARY_SUFFIXES = (".so", ".dylib", ".dll")
# A name that takes where its sources are after the colon (``executorch-source:DIR``).
PREFIXED = re.compile(r"[A-Za-z][\w.-]*:")


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


def _module(target: str | None, op: str = registry.DEFAULT_OP) -> tuple[str, str | None]:
    """The module that starts ``target`` of ``op``, and what the target says of where it
    is; a ConvcheckError naming the op's targets for a name the op does not know."""
    known = registry.get(op).targets
    if target is None:
        return LIBRARY, None
    for name, module in known.items():
        if name.endswith(":") and target.startswith(name):
            return module, target.removeprefix(name)
        if target == name:
            return module, None
    prefixed = PREFIXED.match(target)
    if prefixed or not _is_path(target):
        name = prefixed.group() if prefixed else target
        listed = ", ".join(sorted(known)) or "none"
        raise ConvcheckError(
            f"target={name!r}: op={op!r} has no such target (its targets: {listed}; "
            "or a path to a library of convcheck's C ABI)"
        )
    return LIBRARY, target


def _is_path(target: str) -> bool:
    return os.sep in target or target.endswith(LIBRARY_SUFFIXES) or os.path.exists(target)


def unavailable(target: str | None, revision: str, op: str = registry.DEFAULT_OP) -> str:
    """Why ``target`` cannot judge ``revision`` of ``op`` here, or "" when it can."""
    module, _ = _module(target, op)
    why: str = importlib.import_module(module).unavailable(revision)
    return why


def start(
    target: str | None, revision: str, jobs: int, timeout: float, op: str = registry.DEFAULT_OP
) -> Started:
    """``target``'s judge of ``op``'s calls, started; a ConvcheckError saying why when it
    cannot run here."""
    module, where = _module(target, op)
    why = unavailable(target, revision, op)
    if why:
        raise ConvcheckError(why)
    starter = importlib.import_module(module).start
    started: Started = starter(where, revision, jobs, timeout, op)
    return started


def build(name: str, where: str, op: str = registry.DEFAULT_OP) -> Path:
    """The library of ``op``'s target ``name`` (one that takes its sources after the
    colon), built from ``where``; a ConvcheckError naming the op's targets where it has no
    such target."""
    module, _ = _module(name + where, op)
    library: Path = importlib.import_module(module).build(where)
    return library
