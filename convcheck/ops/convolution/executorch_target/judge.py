"""The ExecuTorch judge: ExecuTorch 1.5.1's portable ``convolution.out``, from PyPI, behind
the sandbox. Same interface as ``convcheck.native.NativeJudge``."""

from __future__ import annotations

from dataclasses import asdict

from convcheck.errors import ConvcheckError
from convcheck.ops.convolution.executorch_target import available, logs
from convcheck.ops.convolution.executorch_target._plan import Limits
from convcheck.ops.convolution.executorch_target.expected import expected_outcome
from convcheck.ops.convolution.executorch_target.logs import LOG_LINE
from convcheck.outcome import Outcome
from convcheck.pool_judge import PoolJudge
from convcheck.sandbox import Crash, Hang, WorkerPool, WorkerSpec
from convcheck.targets import Started

NAME = "executorch 1.5.1 portable"
VERSION = "1.5.1"
INSTALL = f"pip install executorch=={VERSION} --no-deps flatbuffers ruamel.yaml tabulate"


def installed_version() -> str | None:
    """The installed ``executorch`` distribution's version, without importing it."""
    from importlib import metadata

    try:
        return metadata.version("executorch")
    except metadata.PackageNotFoundError:
        return None


def unavailable(revision: str) -> str:
    """The target registry's (``convcheck.targets``): why this target cannot judge here."""
    if revision != "legacy":
        return (
            f"revision {revision!r}: ExecuTorch 1.5.1 runs the legacy kernel "
            "(use --revision legacy with --target executorch)"
        )
    if not available():
        return f"executorch is not installed: {INSTALL}"
    return ""


def start(where: str | None, revision: str, jobs: int, timeout: float) -> Started:
    """The target registry's: ExecuTorch only runs whole, so the model says what it should
    answer (``expected_outcome``); its workers load torch, hence the longer timeout."""
    judge = ExecutorchJudge(jobs=jobs, timeout=max(timeout, 20.0))
    return Started(judge, expected_outcome, logs.CHECK_IDS)


class ExecutorchJudge(PoolJudge):
    """Judges cases with ExecuTorch's runtime in sandboxed worker processes.

    Each case becomes a one-operator program calling ``aten::convolution.out`` (crafted
    directly, see ``_craft.py``), loaded from bytes and run on deterministic inputs.
    ``check`` and ``run`` are the same execution (the kernel only runs whole); ``run``
    also returns the out values, in logical order, for small outputs. A case too large to
    run whole (see ``Limits``) is probed: its checks and out sizes only. A crash (SIGFPE,
    SIGSEGV, abort; or a bias over-read seen in the values) or a hang is an outcome, never
    an exception.
    """

    name = NAME

    def __init__(
        self,
        jobs: int = 1,
        timeout: float = 20.0,
        memory_limit_mb: int | None = 4096,
        limits: Limits | None = None,
    ) -> None:
        version = installed_version()
        if version is None:
            raise ConvcheckError(f"executorch is not installed (install it with: {INSTALL})")
        if version != VERSION:
            raise ConvcheckError(
                f"executorch {version} is installed; this judge is written against "
                f"{VERSION} (install it with: {INSTALL})"
            )
        self.limits = limits or Limits()
        spec = WorkerSpec(
            handler="convcheck.ops.convolution.executorch_target.worker:handle",
            init="convcheck.ops.convolution.executorch_target.worker:init",
            config={"limits": asdict(self.limits)},
            memory_limit_mb=memory_limit_mb,
        )
        self._pool = WorkerPool(spec, jobs=jobs, timeout=timeout)

    @staticmethod
    def outcome(answer: dict | Crash | Hang) -> Outcome:
        return _answer_outcome(answer)

    def __repr__(self) -> str:
        return f"ExecutorchJudge({self.name!r}, jobs={self._pool.jobs})"


def _answer_outcome(answer: dict | Crash | Hang) -> Outcome:
    """A worker's answer (or the sandbox's Crash or Hang) as an Outcome."""
    if isinstance(answer, Crash):
        if answer.kind == "python-exception":  # the handler raised: as NativeJudge says it
            return Outcome.crashed(answer.kind, answer.site, detail=answer.describe())
        where, said = _last_log_line(answer.report)
        return Outcome.crashed(answer.kind, where, detail=said or answer.describe())
    if isinstance(answer, Hang):
        return Outcome.hung(detail=answer.describe())
    detail = answer.get("detail", "")
    if answer["verdict"] == "accept":
        values = answer.get("values")
        return Outcome.accept(
            answer["out_sizes"], None if values is None else tuple(values), detail=detail
        )
    if answer["verdict"] == "crash":
        crash = answer["crash"]
        return Outcome.crashed(crash["kind"], crash["site"], detail=detail)
    return Outcome.reject(answer["check"], detail=detail)


def _last_log_line(report: str) -> tuple[str, str]:
    """Where ExecuTorch last logged before the process died, and what ("", "" if not)."""
    found = list(LOG_LINE.finditer(report))
    if not found:
        return "", ""
    last = found[-1]
    return last["where"], last[0]
