"""Package attributes imported on first use.

A sandbox worker imports the package it runs from again after every crash, and a
parent may never need a judge: a package that offers heavy names gives them through
``attributes`` instead of importing them when it is imported itself.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def attributes(package: str, where: dict[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package`` that imports each name of ``where`` from
    the module named beside it, the first time it is asked for."""

    def __getattr__(name: str) -> Any:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(where[name]), name)

    return __getattr__
