"""What every judge that runs a target in sandbox workers shares: cases in as requests,
answers out as outcomes. A subclass sets ``self._pool`` and says how an answer reads."""

from __future__ import annotations

from collections.abc import Sequence

from convcheck.case import Case
from convcheck.outcome import Outcome
from convcheck.sandbox import Crash, Hang, WorkerPool


class PoolJudge:
    _pool: WorkerPool  # set by the subclass

    def check(self, cases: Sequence[Case], deadline: float | None = None) -> list[Outcome | None]:
        """The checks' verdict and output sizes for each case; None for a case left
        unjudged at ``deadline`` (a ``time.monotonic()`` time) or by ``cancel``."""
        return self._judge(cases, "check", deadline)

    def run(self, cases: Sequence[Case], deadline: float | None = None) -> list[Outcome | None]:
        """As ``check``, then the computation: values for small accepted cases."""
        return self._judge(cases, "run", deadline)

    def crash_report(self, case: Case, mode: str = "check") -> str:
        """The output of a worker that crashed on ``case`` (the sanitizer's report as it
        printed it), judged again; "" when it does not crash. For a harness, whose crash
        ClusterFuzz reads from that report."""
        (answer,) = self._pool.run([self._request(case, mode)], None)
        return answer.report if isinstance(answer, Crash) else ""

    def close(self) -> None:
        """Stop the workers (a later call starts new ones); does not wait for a batch
        running in another thread."""
        self._pool.close()

    def cancel(self) -> None:
        """Abandon the running batch: the cases it did not finish get None."""
        self._pool.cancel()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _judge(
        self, cases: Sequence[Case], mode: str, deadline: float | None
    ) -> list[Outcome | None]:
        requests = [self._request(case, mode) for case in cases]
        answers = self._pool.run(requests, deadline)
        return [None if answer is None else self.outcome(answer) for answer in answers]

    def _request(self, case: Case, mode: str) -> dict | bytes:
        """What the workers are sent to judge ``case`` by ``mode`` ("check" or "run")."""
        return {"case": case.to_json(), "mode": mode}

    @staticmethod
    def outcome(answer: dict | Crash | Hang) -> Outcome:
        raise NotImplementedError
