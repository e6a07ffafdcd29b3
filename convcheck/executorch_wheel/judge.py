"""The judge side of every wheel target: a pool of sandboxed workers that each load the
runtime, and their answers read as outcomes. Same interface as
``convcheck.native.NativeJudge``."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from convcheck.executorch_wheel import VERSION, require_version
from convcheck.executorch_wheel.logs import LOG_LINE
from convcheck.executorch_wheel.memory import Limits
from convcheck.outcome import Outcome
from convcheck.pool_judge import PoolJudge
from convcheck.sandbox import Crash, Hang, WorkerPool, WorkerSpec


class WheelJudge(PoolJudge):
    """Judges an op's cases with ExecuTorch's runtime, one program per case, in the
    sandboxed workers of the op's ``WORKER`` (a module with ``init(config)`` and
    ``handle(request)``; ``config`` holds the ``limits`` and the ``options`` given). A
    case too large to run whole (``limits``) is probed: its checks and out sizes only. A
    crash (SIGFPE, SIGSEGV, abort; or a worker's own finding in the values) or a hang is
    an outcome, never an exception."""

    name = f"executorch {VERSION} portable"
    WORKER: str  # the module, by its name

    def __init__(
        self,
        jobs: int = 1,
        timeout: float = 20.0,
        memory_limit_mb: int | None = 4096,
        limits: Limits | None = None,
        **options: Any,
    ) -> None:
        require_version()
        self.limits = limits or Limits()
        spec = WorkerSpec(
            handler=f"{self.WORKER}:handle",
            init=f"{self.WORKER}:init",
            config={"limits": asdict(self.limits), **options},
            memory_limit_mb=memory_limit_mb,
        )
        self._pool = WorkerPool(spec, jobs=jobs, timeout=timeout)

    @staticmethod
    def outcome(answer: dict | Crash | Hang) -> Outcome:
        """A worker's answer (or the sandbox's Crash or Hang) as an Outcome."""
        if isinstance(answer, Crash):
            if answer.kind == "python-exception":  # the handler raised: as NativeJudge says
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

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, jobs={self._pool.jobs})"


class ProgramJudge(WheelJudge):
    """A wheel judge of ``op`` through the generic worker (``convcheck.executorch_wheel.
    worker``) and the op's target module, ``TARGET``: its programs, plan and log map."""

    WORKER = "convcheck.executorch_wheel.worker"
    TARGET: str  # the module, by its name

    def __init__(self, op: str, **options: Any) -> None:
        super().__init__(op=op, target=self.TARGET, **options)


def _last_log_line(report: str) -> tuple[str, str]:
    """Where ExecuTorch last logged before the process died, and what ("", "" if not)."""
    found = list(LOG_LINE.finditer(report))
    if not found:
        return "", ""
    last = found[-1]
    return last["where"], last[0]
