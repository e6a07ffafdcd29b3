"""``ExecutorchSourceJudge``: a user's ExecuTorch checkout, built sanitized, as the native
judge (``--target executorch-source:DIR``)."""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path

from convcheck.native.judge import NativeJudge
from convcheck.ops.convolution.executorch_source.build import build_target
from convcheck.ops.convolution.executorch_target import logs
from convcheck.outcome import Outcome
from convcheck.sandbox import Crash, Hang
from convcheck.targets import Started

_BRACKETED = re.compile(r"<[^<>]*>|\([^()]*\)")


def unavailable(revision: str) -> str:
    """The target registry's (``convcheck.targets``): a checkout runs any revision's
    calls; a broken checkout or build says so when it starts."""
    return ""


def build(where: str) -> Path:
    """The target registry's: the checkout at ``where``, built (once)."""
    return build_target(where)


def start(where: str | None, revision: str, jobs: int, timeout: float, op: str) -> Started:
    """The target registry's: the checkout at ``where``, built (once) and started; its
    log map reads ExecuTorch's check ids, as for the PyPI build."""
    assert where is not None  # the registry's prefix gives the path, "" at least
    return Started(ExecutorchSourceJudge(where, jobs=jobs, timeout=timeout), None, logs.CHECK_IDS)


class ExecutorchSourceJudge(NativeJudge):
    """``NativeJudge`` over the library ``build_target(source)`` builds (once, then cached),
    with check ids read from the kernel's log and C++ crash sites named by function."""

    def __init__(self, source: str | os.PathLike, **options) -> None:
        self.source = str(source)
        super().__init__(
            target=build_target(source),
            worker="convcheck.ops.convolution.executorch_source.worker",
            **options,
        )

    @staticmethod
    def outcome(answer: bytes | dict | Crash | Hang) -> Outcome:
        return named_by_function(NativeJudge.outcome(answer))


def named_by_function(outcome: Outcome) -> Outcome:
    """``outcome`` with its C++ crash site, if any, named by function (``short_site``)."""
    if not outcome.crash_site:
        return outcome
    return dataclasses.replace(outcome, crash_site=short_site(outcome.crash_site))


def short_site(site: str) -> str:
    """``function file:line`` from a sanitizer's demangled C++ frame: the return type,
    namespaces, template arguments and parameters go, so that one function's per-dtype
    instances are one site (``conv3d_impl<float, ...>`` and ``conv3d_impl<c10::Half, ...>``
    are both ``conv3d_impl``)."""
    function, _, where = site.rpartition(" ")
    if not function:
        return site
    previous = None
    while previous != function:
        previous, function = function, _BRACKETED.sub("", function)
    words = function.split()
    name = words[-1].split("::")[-1] if words else function
    return f"{name} {where}"
