"""Solver answers kept on disk, under the hash of the code they are a function of.

Solving a revision takes seconds to minutes and its answer changes only with the model,
the solver or z3: a machine solves once per version, and every later campaign and ``ci``
job reads the file. z3's work is bounded by steps, not by a clock (``limits``), so the
answer is the same on every machine: a cache solved on a loaded one is the one a quiet one
would have solved. The key holds z3's full version and the step limits (``limits.STEPS``)
beside the sources. Only a complete answer is stored (``solved``); one the disk refuses is
kept in the process, so that ``solve_ahead`` still spares the campaign a second solve.
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
from convcheck.solver import limits

# What the answers are a function of: the step runner (with the outcome it returns and
# the validation of its arguments), the ops (their steps, and the torch checks that
# ``prove --against torch`` runs beside them) and their registry, the solver and its
# engine, and C arithmetic.
_SOURCES = (
    "model.py",
    "steps.py",
    "registry.py",
    "ops",
    "solver",
    "engines/solver.py",
    "fixedint.py",
    "case.py",
    "outcome.py",
    "validation.py",
)


# The answers the disk refused, by file: solved once in this process all the same.
_kept: dict[Path, object] = {}


def path(name: str) -> Path:
    return cache_dir() / f"solver-{name}-{_digest()}.json"


def load(name: str):
    """The stored answer, or None."""
    where = path(name)
    try:
        return json.loads(where.read_text())
    except (OSError, ValueError):
        # Not solved yet here, or a file another version left half-written; or the disk
        # refused this process's answer, which it keeps.
        return _kept.get(where)


def cold(name: str) -> bool:
    """Not solved yet here: the next ``solved(name, ...)`` solves."""
    return load(name) is None


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
    cannot be written only means solving again in the next process."""
    try:
        files.write_atomically(path(name), json.dumps(data), "solver cache")
    except ConvcheckError:
        _kept[path(name)] = data


@functools.cache
def _digest() -> str:
    root = Path(convcheck.__file__).parent
    digest = hashlib.sha256(f"z3 {z3.get_full_version()}; {limits.STEPS}".encode())
    for name in _SOURCES:
        folder = root / name
        for file in sorted(folder.rglob("*.py")) if folder.is_dir() else [folder]:
            digest.update(file.relative_to(root).as_posix().encode() + b"\0" + file.read_bytes())
    return digest.hexdigest()[:16]
