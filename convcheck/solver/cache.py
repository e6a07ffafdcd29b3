"""Solver answers kept on disk, under the hash of the code they are a function of.

Solving a revision takes seconds to minutes and its answer changes only with the model,
the solver or z3: a machine solves once per version, and every later campaign and ``ci``
job reads the file. z3's work is bounded by steps, not by a clock (``limits``), so the
answer is the same on every machine: a cache solved on a loaded one is the one a quiet one
would have solved. Only a complete answer is stored (``solved``).
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path

import z3

import convcheck
from convcheck import files
from convcheck.errors import ConvcheckError
from convcheck.native.build import cache_dir

# What the answers are a function of: the step runner (with the outcome it returns and
# the validation of its arguments), the ops (their steps, and the torch checks that
# ``prove --against torch`` runs beside them), the solver, and C arithmetic.
_SOURCES = (
    "model",
    "ops",
    "solver",
    "fixedint.py",
    "case.py",
    "outcome.py",
    "validation.py",
)


def path(name: str) -> Path:
    return cache_dir() / f"solver-{name}-{_digest()}.json"


def load(name: str):
    """The stored answer, or None."""
    try:
        return json.loads(path(name).read_text())
    except (OSError, ValueError):
        return None  # not solved yet here, or a file another version left half-written


def solved(name: str, solve, encode=lambda answer: answer, decode=lambda data: data, fresh=False):
    """``name``'s answer from the disk, else ``solve()``'s, which returns the answer and
    whether it is complete: one cut short (a time budget, a signal) is used, not stored.
    ``encode`` and ``decode`` turn the answer into JSON data and back. ``fresh``: solve
    even where an answer is stored (and store the new one)."""
    stored = None if fresh else load(name)
    if stored is not None:
        try:
            return decode(stored)
        except (KeyError, TypeError, ValueError):
            pass  # a file of another shape (edited, or a bug's): solved again, replaced
    answer, complete = solve()
    if complete:
        store(name, encode(answer))
    return answer


def store(name: str, data) -> None:
    """Atomically (two processes solving at once each write a whole file); a cache that
    cannot be written only means solving again next time."""
    try:
        files.write_atomically(path(name), json.dumps(data), "solver cache")
    except ConvcheckError:
        pass


@functools.cache
def _digest() -> str:
    root = Path(convcheck.__file__).parent
    digest = hashlib.sha256(z3.get_version_string().encode())
    for name in _SOURCES:
        folder = root / name
        for file in sorted(folder.rglob("*.py")) if folder.is_dir() else [folder]:
            digest.update(file.relative_to(root).as_posix().encode() + b"\0" + file.read_bytes())
    return digest.hexdigest()[:16]
