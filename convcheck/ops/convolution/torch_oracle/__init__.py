"""The torch judge: ATen's verdict on a case, for any size; its values for small shapes.

Two paths, chosen per case:

* ``real``: every tensor small (``SMALL_NUMEL`` elements, input rank <= 5, a small
  output): real CPU ``torch.ops.aten.convolution.default`` on the shared deterministic
  values (``convcheck.values``), laid out by each tensor's dim order, in sandboxed
  worker processes (torch itself crashes on some calls), once as configured and once
  with oneDNN disabled; where the two disagree, ``torch_bug`` says how (torch's bug,
  not the kernel's). A campaign makes the real calls only where their answer can change
  a finding about the kernel (``start``'s ``matters``), and the oneDNN call on about one
  in ``ONEDNN_EVERY`` of the calls a oneDNN backend takes, chosen by a hash of the call:
  on the others the call without oneDNN stands for both (``onednn_skipped``;
  docs/engines.md says why). ``convcheck judge``, replay and shrinking make every real
  call. A call runs with one intra-op thread where the check path shows that ATen picks
  the same backend with one thread as with ``threads`` (see ``single_thread``).
* ``checks``: any size, nothing allocated or computed: ATen's own checks in order
  (``_checks``), with torch's C++ ``_select_conv_backend`` on zero-stride tensors
  where this torch has it, a Python equivalent where it does not.

The thread count and oneDNN change some of torch's verdicts (the backend is chosen by
them), so both are fixed and recorded. torch is imported on first use, never by
``import convcheck``.

    with TorchJudge(jobs=2) as judge:
        for verdict in judge.judge(cases):
            print(verdict.describe())
"""

from __future__ import annotations

import functools
import math
import time
import zlib
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import field, replace
from typing import Any

from convcheck.errors import ConvcheckError
from convcheck.frozen import frozen
from convcheck.ops.convolution.case import ConvolutionCase
from convcheck.ops.convolution.torch_oracle import _torch
from convcheck.ops.convolution.torch_oracle._checks import (
    aten_call,
    backend_choice,
    check_path,
    creation_problem,
)
from convcheck.ops.convolution.torch_oracle._compare import first_difference
from convcheck.ops.convolution.torch_oracle._fallback import shape_checks
from convcheck.ops.convolution.torch_oracle._normalize import normalize
from convcheck.ops.convolution.torch_oracle._worker import crashed_call, decode_values, encode_case
from convcheck.ops.convolution.torch_oracle.aten import TorchError
from convcheck.outcome import ACCEPT, CRASH, HANG, REJECT, Outcome
from convcheck.validation import check_positive_int, check_seconds

# The check path's pieces are public for the solver, which runs them on symbolic values.
__all__ = [
    "DEFAULT_THREADS",
    "TorchError",
    "TorchJudge",
    "TorchVerdict",
    "aten_call",
    "available",
    "check_path",
    "creation_problem",
    "normalize",
    "shape_checks",
]

# The reference measurements (docs of torch 2.13's verdicts) were taken with 2 threads.
DEFAULT_THREADS = 2
SMALL_NUMEL = 4096  # elements of each of input, weight, bias
SMALL_OUT_NUMEL = 65536  # elements of the output torch would compute
SMALL_WORK = 1 << 25  # output elements times taps per output element
# oneDNN's transposed convolution takes time in proportion to the stride, however small
# the tensors (seconds near 2^31, and a SIGFPE at 2^31 - 1; benchmarks/README.md), where
# the same call without oneDNN is instant. A campaign meets such calls every few thousand
# cases, and each held up its shard; past this stride they are judged by the checks. The
# segfaults of strides from 2^16 (torch's own bug) still show below it.
ONEDNN_TRANSPOSED_STRIDE = 1 << 24
# The backends that exist only while oneDNN is enabled.
ONEDNN_BACKENDS = frozenset({"Mkldnn", "MkldnnTranspose", "MkldnnEmpty"})
# Real calls per worker request: the request's fixed cost is shared by this many, and a
# batch is still cut in enough requests to keep every worker busy.
CALLS_PER_REQUEST = 16
# Exploration makes the oneDNN call on one in this many of the calls whose check path
# picks a oneDNN backend (``TorchJudge.onednn_every``).
ONEDNN_EVERY = 8


def available() -> bool:
    """Whether torch is importable (without importing it)."""
    return _torch.available()


@frozen
class TorchVerdict:
    """What torch answers on one case.

    ``outcome``: as configured (oneDNN on, ``threads`` threads); ``no_onednn``: the same
    call with oneDNN disabled (None when not computed). ``backend``: the ATen backend
    the configured call goes to ("Mkldnn", "Slow2d", "Empty", ...; "" when a check
    before the choice rejects). ``path``: "real" (CPU tensors, values for accepted
    calls) or "checks" (any size, no computation). ``torch_bug``: why the two torch
    answers disagree, or None. ``ran_threads``: the intra-op threads the real calls ran
    with (1 where the backend does not depend on it, see ``TorchJudge.single_thread``;
    None on the check path). ``onednn_skipped``: a campaign's exploration made only the
    call without oneDNN (``TorchJudge.onednn_every``), whose answer stands for both.
    """

    outcome: Outcome
    no_onednn: Outcome | None
    backend: str
    threads: int
    path: str
    torch_bug: str | None = None
    out_dtype: str | None = None
    torch_version: str = field(default="", compare=False)
    # False when the real calls were due but a deadline cut them short: the verdict is
    # the checks', and no evidence about what the real calls would have shown.
    complete: bool = field(default=True, compare=False)
    ran_threads: int | None = field(default=None, compare=False)
    onednn_skipped: bool = field(default=False, compare=False)

    def describe(self) -> str:
        head = f"torch {self.torch_version} ({self.path}, {self.backend or 'no backend'}, "
        ran = "" if self.ran_threads in (None, self.threads) else f", run with {self.ran_threads}"
        head += f"{self.threads} threads{ran}): {_describe(self.outcome)}"
        if self.onednn_skipped:
            head += " (run without oneDNN: the oneDNN call was not sampled)"
        if self.no_onednn is not None and not self.outcome.same_answer(self.no_onednn):
            head += f"; oneDNN disabled: {_describe(self.no_onednn)}"
        if self.torch_bug:
            head += f"; torch-bug: {self.torch_bug}"
        return head

    def to_json(self) -> dict[str, Any]:
        return {
            "outcome": _outcome_json(self.outcome),
            "no_onednn": None if self.no_onednn is None else _outcome_json(self.no_onednn),
            "backend": self.backend,
            "threads": self.threads,
            "ran_threads": self.ran_threads,
            "onednn_skipped": self.onednn_skipped,
            "path": self.path,
            "torch_bug": self.torch_bug,
            "out_dtype": self.out_dtype,
            "torch": self.torch_version,
        }


def _outcome_json(outcome: Outcome) -> dict[str, Any]:
    data = outcome.to_json()
    data["detail"] = outcome.detail
    return data


def _describe(outcome: Outcome) -> str:
    text = outcome.describe()
    if outcome.verdict != ACCEPT and outcome.detail:
        text += f" ({outcome.detail.splitlines()[0][:100]})"
    return text


class TorchJudge:
    """ATen's verdicts, with a fixed thread count and recorded backend settings.

    ``jobs`` worker processes run the real calls, each with ``timeout`` seconds a call
    and ``memory_limit_mb`` of address space. ``threads`` is torch's intra-op thread
    count, in the workers and for the check path's backend choice. ``warm``: start the
    workers' fork server at once, so that its import of torch runs beside this
    process's own (a command that will make real calls: a second saved on two cores).
    """

    def __init__(
        self,
        jobs: int = 1,
        timeout: float = 20.0,
        threads: int = DEFAULT_THREADS,
        memory_limit_mb: int | None = 4096,
        warm: bool = False,
    ) -> None:
        if not available():
            raise ConvcheckError(
                "the torch judge needs PyTorch, which is not installed; install it with: "
                + _torch.INSTALL_HINT
            )
        check_positive_int("jobs", jobs)
        check_positive_int("threads", threads)
        check_seconds("timeout", timeout)
        if memory_limit_mb is not None:
            check_positive_int("memory_limit_mb", memory_limit_mb)
        self.jobs = jobs
        self.timeout = float(timeout)
        self.threads = threads
        self.memory_limit_mb = memory_limit_mb
        self._pool = None
        if warm:
            self._workers().warm()
        self._runner: ThreadPoolExecutor | None = None  # waits for the real calls
        # Reuse the oneDNN-on answer for oneDNN off where no oneDNN backend is involved
        # (``_check_both``); tests turn it off to hold the shortcut to the full runs.
        self.reuse_without_onednn = True
        # Run a real call with one intra-op thread where ATen picks the same backends
        # (oneDNN on and off) with one thread as with ``threads``: the call then goes
        # down the same code, split in fewer parts, and skips waking the other threads,
        # which costs a tiny convolution more than its work. ``_call_threads``; tests
        # turn it off to hold the shortcut to the full runs.
        self.single_thread = True
        # Where ``start`` is given ``matters`` (a campaign's exploration), one in this many
        # of the calls whose check path picks a oneDNN backend runs with oneDNN too; 1
        # makes every oneDNN call (benchmarks compare).
        self.onednn_every = ONEDNN_EVERY

    # Imported at the first use, not here: a sharded campaign's parent judges nothing
    # until it minimises, and its shards start sooner without its import of torch.
    @functools.cached_property
    def private_api(self) -> bool:
        return _torch.has_select_conv_backend()

    @functools.cached_property
    def torch_version(self) -> str:
        return str(_torch.torch_module().__version__)

    def settings(self) -> dict[str, Any]:
        """Everything that changes torch's verdicts here: record it with results."""
        support = _torch.onednn_support()
        return {
            "torch": self.torch_version,
            "threads": self.threads,
            "onednn": support["available"],
            "onednn_version": _torch.onednn_version(),
            "onednn_bf16": support["bf16"],
            "onednn_fp16": support["fp16"],
            "no_onednn_also": True,
            "single_thread_calls": self.single_thread and self.threads > 1,
            "select_conv_backend": self.private_api,
            "small": {
                "numel": SMALL_NUMEL,
                "out_numel": SMALL_OUT_NUMEL,
                "work": SMALL_WORK,
                "onednn_transposed_stride": ONEDNN_TRANSPOSED_STRIDE,
            },
        }

    # -- the two paths ------------------------------------------------------------
    def judge(
        self, cases: Sequence[ConvolutionCase], values: bool = True, compute_rejected: bool = True
    ) -> list[TorchVerdict]:
        """One verdict per case, in order: small cases on real CPU, the rest by checks.

        ``compute_rejected=False`` leaves small calls that the check path rejects to the
        check path (tests/torch prove the two agree there): many times faster for a
        campaign, where most calls are rejected.
        """
        return self.start(cases, values, compute_rejected)()

    def predict(self, case: ConvolutionCase) -> TorchVerdict:
        """The check path's verdict alone: no worker, no computation, no values."""
        return self._checks_verdict(*self._check_both(case))

    def start(
        self,
        cases: Sequence[ConvolutionCase],
        values: bool = True,
        compute_rejected: bool = True,
        deadline: float | None = None,
        matters: Callable[[int, TorchVerdict], bool] | None = None,
    ) -> Callable[[], list[TorchVerdict]]:
        """``judge`` in two halves: the check path now, in this thread; the real calls
        sent to the workers, which run while the caller does other work (the native
        judge). Returns the function that waits for them and gives the verdicts. Real
        calls still running at ``deadline`` (a ``time.monotonic()`` time) are abandoned:
        their cases get the checks' verdict with ``complete=False``.

        ``matters(index, verdict)``, given a small case's index and its check-path
        verdict, says whether the case's real calls can change what the caller makes of
        it; where they cannot, the check path's verdict is the case's. With ``matters``,
        the oneDNN call is sampled too (``onednn_every``)."""
        checked, small, ran_threads, skipped = [], [], {}, set()
        # The check path's verdicts ``matters`` was given, which ``finish`` reuses where
        # no real call stands for them (each a frozen dataclass of ten fields).
        by_checks: dict[int, TorchVerdict] = {}
        calls, slots = [], []  # slots[k]: the (case, oneDNN) answers call k stands for
        for i, case in enumerate(cases):
            chk = self._check_both(case)
            checked.append(chk)
            # The verdicts first: they rule out most of a campaign's cases at once, more
            # cheaply than sizing the call up.
            if not (
                (
                    compute_rejected
                    or chk[0].outcome.verdict == ACCEPT
                    or chk[1].outcome.verdict == ACCEPT
                )
                and _is_small(case, chk)
            ):
                continue
            if matters is not None:
                verdict = by_checks[i] = self._checks_verdict(*chk)
                if not matters(i, verdict):
                    continue
            small.append(i)
            packed = encode_case(case)
            both = self.reuse_without_onednn and chk[0].backend not in ONEDNN_BACKENDS
            threads = ran_threads[i] = self._call_threads(case, chk)
            skip = not both and matters is not None and self._skip_onednn(packed)
            if skip:
                skipped.add(i)
            calls.append([packed, not skip, threads])
            slots.append([(i, 0), (i, 1)] if both or skip else [(i, 0)])
            if not (both or skip):
                calls.append([packed, False, threads])
                slots.append([(i, 1)])
        # All at once, after the check path: sent in parts as the check path went on, the
        # first parts ran meanwhile, yet each part cost the parent more per case than
        # the overlap gained, even under load.
        running = self._send(calls, values, deadline) if calls else None

        def finish() -> list[TorchVerdict]:
            results: dict[int, list[Any]] = {i: [None, None] for i in small}
            for answer, places in zip(running.result() if running else [], slots, strict=True):
                for i, which in places:
                    results[i][which] = answer
            verdicts = []
            for i, case in enumerate(cases):
                default, off = checked[i]
                # A real run left unfinished (cancelled) falls back to the checks, which
                # the tests hold equal to it.
                if i in results and None not in results[i]:
                    on, off = results[i]
                    verdicts.append(
                        self._real_verdict(
                            case, default.backend, on, off, ran_threads[i], i in skipped
                        )
                    )
                else:
                    cut = i in results and deadline is not None and time.monotonic() >= deadline
                    verdict = by_checks.get(i) or self._checks_verdict(default, off)
                    verdicts.append(replace(verdict, complete=False) if cut else verdict)
            return verdicts

        return finish

    def _send(self, calls: list[list[Any]], values: bool, deadline: float | None) -> Future:
        """``calls`` to the workers, from the runner thread; their answers to come."""
        if self._runner is None:
            self._runner = ThreadPoolExecutor(1, thread_name_prefix="convcheck-torch")
        return self._runner.submit(self._run_calls, calls, values, deadline)

    def _run_calls(self, calls: list[list[Any]], values: bool, deadline: float | None):
        """Each call's answer, in order (None where the deadline or a cancel cut it).

        Several calls share a request. A request whose worker crashed has lost every
        answer in it: the crash is the answer of the call it was running (its report
        says which), and the others run again. After a hang, or a crash that does not
        say, each call runs again alone.
        """
        from convcheck.sandbox import Crash

        if not calls:
            return []
        pool = self._workers()
        per = max(1, min(CALLS_PER_REQUEST, -(-len(calls) // (4 * self.jobs))))
        chunks = [calls[k : k + per] for k in range(0, len(calls), per)]
        answers = pool.run([{"calls": c, "values": values} for c in chunks], deadline)
        out: list[Any] = []
        for chunk, answer in zip(chunks, answers, strict=True):
            if isinstance(answer, dict):
                out.extend(answer["answers"])
            elif answer is None or len(chunk) == 1:
                out.extend([answer] * len(chunk))
            else:
                at = crashed_call(answer.report, len(chunk)) if isinstance(answer, Crash) else None
                if at is None:
                    alone = pool.run([{"calls": [c], "values": values} for c in chunk], deadline)
                    out.extend(a["answers"][0] if isinstance(a, dict) else a for a in alone)
                else:
                    rest = self._run_calls(chunk[:at] + chunk[at + 1 :], values, deadline)
                    out.extend([*rest[:at], answer, *rest[at:]])
        return out

    def _skip_onednn(self, packed: list[Any]) -> bool:
        """Whether this oneDNN-backed call is left to its run without oneDNN: all but about
        one in ``onednn_every``, chosen by a hash of the call itself, so that a call is
        sampled or not whatever was judged before it: a seeded campaign, its shards, and a
        merge that judges their findings again all sample the same calls."""
        return zlib.crc32(repr(packed).encode()) % self.onednn_every != 0

    def _call_threads(self, case: ConvolutionCase, checked) -> int:
        """The intra-op threads to run ``case``'s real calls with: 1 where ATen picks the
        same backends with 1 thread as with ``threads`` (oneDNN on, and off), so the
        verdict cannot depend on it; otherwise ``threads``.

        As in ``_check_both``, a backend that is no oneDNN one with oneDNN on is also the
        choice with it off (disabling oneDNN only changes a oneDNN choice).
        """
        on, off = checked
        if not self.single_thread or self.threads == 1:
            return self.threads
        one = backend_choice(case, threads=1, onednn=True, private=self.private_api, checked=on)
        if one != on.backend:
            return self.threads
        if self.reuse_without_onednn and one not in ONEDNN_BACKENDS:
            return 1
        one_off = backend_choice(
            case, threads=1, onednn=False, private=self.private_api, checked=off
        )
        return 1 if one_off == off.backend else self.threads

    def _check_both(self, case: ConvolutionCase):
        """The check path with oneDNN on, then off.

        Disabling oneDNN changes which backend torch picks only where it picked a oneDNN
        one; every check before the choice and every other backend's checks are the same
        code either way. So where oneDNN on picks no oneDNN backend, the answer with it
        off is the same answer (memoised on the backend, which is what the verdict
        depends on), and the second run, half of the check path's time, is skipped.
        Where it runs, it asks torch again on the arguments the first made. ``tests/torch``
        holds both shortcuts equal to running both afresh.
        """
        on = check_path(case, threads=self.threads, onednn=True, private=self.private_api)
        if self.reuse_without_onednn and on.backend not in ONEDNN_BACKENDS:
            return on, on
        off = check_path(
            case, threads=self.threads, onednn=False, private=self.private_api, again=on
        )
        return on, off

    def _real_verdict(
        self,
        case: ConvolutionCase,
        backend: str,
        default: Any,
        off: Any,
        ran_threads: int,
        onednn_skipped: bool = False,
    ) -> TorchVerdict:
        # A skipped oneDNN call: the run without oneDNN stands for both, crash included,
        # and there is nothing for it to disagree with.
        outcome, dtype = _real_outcome(case, default, "no oneDNN" if onednn_skipped else backend)
        if off is default and (onednn_skipped or outcome.verdict in (ACCEPT, REJECT)):
            # one run stands for both (``_check_both``): read once; only a crash's site
            # names the backend
            other, other_dtype = outcome, dtype
        else:
            other, other_dtype = _real_outcome(case, off, "no oneDNN")
        return TorchVerdict(
            outcome=outcome,
            no_onednn=other,
            backend=backend,
            threads=self.threads,
            path="real",
            torch_bug=None
            if onednn_skipped
            else _disagreement(outcome, other, dtype or other_dtype),
            out_dtype=dtype,
            torch_version=self.torch_version,
            ran_threads=ran_threads,
            onednn_skipped=onednn_skipped,
        )

    def _checks_verdict(self, default, off) -> TorchVerdict:
        bug = _disagreement(default.outcome, off.outcome, None)
        return TorchVerdict(
            outcome=default.outcome,
            no_onednn=off.outcome,
            backend=default.backend,
            threads=self.threads,
            path="checks",
            torch_bug=None if bug is None else f"{bug} (predicted by the checks)",
            torch_version=self.torch_version,
        )

    def _workers(self):
        if self._pool is None:
            from convcheck.sandbox import WorkerPool, WorkerSpec

            spec = WorkerSpec(
                handler="convcheck.ops.convolution.torch_oracle._worker:handle",
                init="convcheck.ops.convolution.torch_oracle._worker:init",
                config={"threads": self.threads},
                # PASSIVE: idle OpenMP threads sleep instead of spinning, so that several
                # workers with several threads each share the cores (spinning ones starve
                # each other on a machine with few cores).
                # One OpenBLAS thread: numpy's, which torch loads, would otherwise start a
                # thread of its own, and a process with two threads cannot fork safely.
                env={
                    "OMP_NUM_THREADS": str(self.threads),
                    "OMP_WAIT_POLICY": "PASSIVE",
                    "OPENBLAS_NUM_THREADS": "1",
                },
                memory_limit_mb=self.memory_limit_mb,
                sanitized=False,
                # A crash then costs a fork of a worker that has torch loaded, not an
                # import of torch, the slowest part of a start: torch crashes on some
                # small calls.
                fork_server=True,
            )
            self._pool = WorkerPool(spec, jobs=self.jobs, timeout=self.timeout)
        return self._pool

    def cancel(self) -> None:
        """Abandon a running batch; safe from a signal handler."""
        if self._pool is not None:
            self._pool.cancel()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None
        if self._runner is not None:
            self._runner.shutdown()
            self._runner = None

    def __enter__(self) -> TorchJudge:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _is_small(case: ConvolutionCase, checked) -> bool:
    if case.input.rank > 5:
        return False  # torch segfaults on some of these: decided by the checks only
    if checked[0].backend == "MkldnnTranspose" and max(case.stride) > ONEDNN_TRANSPOSED_STRIDE:
        return False
    for spec in (case.input, case.weight, case.bias):
        if spec is not None and spec.numel > SMALL_NUMEL:
            return False
    taps = 1
    for s in case.weight.sizes[1:]:
        taps *= s
    for result in checked:
        sizes = result.outcome.out_sizes
        if sizes is None:
            continue
        out = 1
        for s in sizes:
            out *= max(s, 0)
        if out > SMALL_OUT_NUMEL or out * max(taps, 1) > SMALL_WORK:
            return False
    return True


def _real_outcome(case: ConvolutionCase, answer: Any, backend: str) -> tuple[Outcome, str | None]:
    from convcheck.ops.convolution.torch_oracle._normalize import normalize
    from convcheck.sandbox import Crash, Hang

    if isinstance(answer, Hang):
        return Outcome.hung(detail=answer.describe()), None
    if isinstance(answer, Crash):
        assert answer.kind != "python-exception", f"torch worker failed: {answer.site}"
        # The site: where in torch, stably named (the frame faulthandler saw is in detail).
        site = f"aten.convolution.{backend}" if backend != "no oneDNN" else "aten.convolution"
        return Outcome.crashed(answer.kind, site, answer.describe()), None
    if answer["verdict"] == ACCEPT:
        raw = answer.get("values")
        values = None if raw is None else decode_values(raw)
        dtype = answer["dtype"]
        return Outcome.accept(answer["sizes"], values, detail=f"dtype {dtype}"), dtype
    check = normalize(answer["error"], answer["message"], case)
    return Outcome.reject(check, detail=f"{answer['error']}: {answer['message']}"), None


def _disagreement(a: Outcome, b: Outcome, dtype: str | None) -> str | None:
    """Why two torch answers on one call (oneDNN on, off) differ, or None.

    The text starts with what differs ("verdict:", "sizes:", "values:") and the two
    answers' classes, so that it can serve as a signature.
    """
    if a.verdict == b.verdict == HANG:
        return None  # slow both ways: no disagreement
    if a.verdict != b.verdict or a.verdict in (CRASH, HANG):
        return f"verdict: oneDNN {a.category}, no oneDNN {b.category}; {_both(a, b)}"
    if a.verdict != ACCEPT:
        return None  # both reject: the reasons may differ by backend
    if a.out_sizes != b.out_sizes:
        assert a.out_sizes is not None and b.out_sizes is not None  # both accept
        return f"sizes: oneDNN {list(a.out_sizes)}, no oneDNN {list(b.out_sizes)}"
    if a.values is not None and b.values is not None:
        diff = first_difference(a.values, b.values, dtype or "float32")
        if diff is not None:
            index, x, y = diff
            return f"values: {dtype} element {index} is {_num(x)} with oneDNN, {_num(y)} without"
    return None


def _num(v: float) -> str:
    return repr(v) if not math.isfinite(v) else f"{v:.6g}"


def _both(a: Outcome, b: Outcome) -> str:
    return f"with oneDNN {_describe(a)}, without {_describe(b)}"
