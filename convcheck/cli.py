"""The ``convcheck`` command: each subcommand is a function of (args, stdout, stderr).

Exit codes everywhere: 0 nothing found, 1 findings, 2 a usage or set-up error. A 2 is one
line on stderr; so is a bug in convcheck itself (its traceback goes to a file), since the
exit code 1 of an uncaught exception would read as "findings".
"""

from __future__ import annotations

import argparse
import signal
import sys
import tempfile
import threading
import traceback
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, TextIO

from convcheck import engines, model, registry
from convcheck.check_ids import COMPARE, load_map
from convcheck.commands import (
    cmd_build,
    cmd_ci,
    cmd_explain,
    cmd_fuzz,
    cmd_judge,
    cmd_merge,
    cmd_minimize,
    cmd_prove,
    cmd_replay,
    cmd_target,
)
from convcheck.errors import ConvcheckError
from convcheck.export import cmd_export
from convcheck.validation import check_positive_int, check_seconds

ERROR = 2
# --jobs at most: each job is a process importing torch (a shard, ~250 MB resident here)
# with workers of its own (~220 MB each with torch), so 64 already ask for tens of GB, a
# large CI runner's memory and cores; results do not depend on it (a seeded campaign finds
# the same with any number), and 100000 spent minutes starting workers and never judged.
MAX_JOBS = 64


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is our exception, not a SystemExit from deep inside."""

    def error(self, message: str) -> NoReturn:
        raise ConvcheckError(f"{self.prog}: {message}")


def _op_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--op",
        default=registry.DEFAULT_OP,
        choices=registry.names(),
        help="the kernel: its checks, its C kernel, its torch call"
        f" (default {registry.DEFAULT_OP})",
    )


def _judges(parser: argparse.ArgumentParser, torch_flag: bool = True) -> None:
    _op_option(parser)
    parser.add_argument("--revision", default="legacy", choices=sorted(model.REVISIONS))
    parser.add_argument(
        "--target",
        help="a shared library exporting the convcheck ABI, 'executorch' "
        "(ExecuTorch 1.5.1 from PyPI; needs --revision legacy), or 'executorch-source:DIR' "
        "(an ExecuTorch checkout, built sanitized)",
    )
    parser.add_argument(
        "--jobs",
        type=_checked("jobs", int, lambda name, value: check_positive_int(name, value, MAX_JOBS)),
        default=1,
        help="worker processes per judge; fuzz and ci's campaigns: processes that each judge "
        "a share of the cases with one worker per judge",
    )
    parser.add_argument(
        "--timeout",
        type=_checked("timeout", float, check_seconds),
        default=10.0,
        help="seconds per case in a worker",
    )
    if torch_flag:
        parser.add_argument("--no-torch", action="store_true", help="leave torch out")
    parser.add_argument(
        "--check-map",
        metavar="FILE",
        type=load_map,  # read at once: a malformed map is a usage error before any work
        help="JSON from the target's check ids (or regexes) to those of docs/checks.md",
    )
    parser.add_argument(
        "--compare",
        choices=COMPARE,
        default="id",
        help="'verdict': ignore the target's check ids (verdict, sizes, crash kind only)",
    )


def _torch_options(parser: argparse.ArgumentParser, default: str = "CORPUS/torch") -> None:
    parser.add_argument(
        "--torch-bugs",
        metavar="DIR",
        help=f"folder for torch's own bugs, apart from the kernel's findings (default {default})",
    )
    parser.add_argument(
        "--show-torch-bugs",
        action="store_true",
        help="list torch's own bugs in the report (default: one counted line)",
    )


def _budget_options(parser: argparse.ArgumentParser, default_time: float) -> None:
    parser.add_argument(
        "--time",
        type=_checked("time", float, check_seconds),
        help=f"seconds of campaign (default {default_time:g}; none with --cases alone)",
    )
    parser.add_argument(
        "--cases",
        type=_checked("cases", int, check_positive_int),
        help="stop after this many judged cases (with --seed: the same campaign anywhere)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--minimize-time",
        type=_checked("minimize-time", float, check_seconds),
        default=60.0,
        help="seconds for minimising the new findings, all together (default 60)",
    )
    parser.set_defaults(default_time=default_time)


def _report_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--report", help="also write an HTML report here: the table and findings over time"
    )


def _checked(name: str, convert: Callable, check: Callable) -> Callable[[str], object]:
    """An option's type: the text converted, then checked by ``convcheck.validation``
    under the option's name; its ConvcheckError passes through argparse untouched."""

    def parse(text: str) -> object:
        try:
            value = convert(text)
        except ValueError:
            value = text
        return check(name, value)

    return parse


def _parser() -> _Parser:
    parser = _Parser(
        prog="convcheck",
        description="A differential fuzzer for the argument checks of a convolution kernel.",
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    explain = sub.add_parser("explain", help="the model's trace for one or more cases")
    explain.add_argument("cases", nargs="*", help="case JSON files (default: bundled examples)")
    _op_option(explain)
    explain.add_argument("--revision", default="current", choices=sorted(model.REVISIONS))
    explain.add_argument("--json", action="store_true", help="one JSON object per case")
    explain.add_argument("--verbose", action="store_true", help="every arithmetic operation")
    explain.set_defaults(func=cmd_explain)

    judge = sub.add_parser("judge", help="every judge's outcome for one case, and the findings")
    judge.add_argument("case")
    judge.add_argument("--json", action="store_true")
    _judges(judge)
    judge.set_defaults(func=cmd_judge)

    fuzz = sub.add_parser("fuzz", help="a campaign: live progress, a report, findings saved")
    _judges(fuzz)
    fuzz.add_argument("--engine", default="random", choices=engines.names())
    _budget_options(fuzz, default_time=30.0)
    fuzz.add_argument(
        "--until-first", action="store_true", help="stop at the first new finding about the kernel"
    )
    fuzz.add_argument("--corpus", default="corpus", help="folder for findings (default corpus/)")
    fuzz.add_argument("--no-minimize", action="store_true")
    _torch_options(fuzz)
    _report_option(fuzz)
    fuzz.set_defaults(func=cmd_fuzz)

    replay = sub.add_parser(
        "replay",
        help="run every corpus entry, each with its op's judges (--op: that op's alone); "
        "exit 1 on any finding",
    )
    replay.add_argument("corpus", nargs="?", default="corpus")
    _judges(replay)
    replay.set_defaults(revision="current", op=None)
    stale = "fail when an entry no longer shows its finding"
    replay.add_argument("--expect-reproduce", action="store_true", help=stale)
    replay.set_defaults(func=cmd_replay)

    shrink = sub.add_parser("minimize", help="shrink a case, keeping its finding's signature")
    shrink.add_argument("case")
    shrink.add_argument("--kind", help="which finding to keep, when the case shows several")
    shrink.add_argument("--verbose", action="store_true", help="calls and shrinks of each pass")
    _judges(shrink)
    shrink.set_defaults(func=cmd_minimize)

    ci = sub.add_parser("ci", help="the sanitizer CI job: replay the corpus, then a campaign")
    _judges(ci)
    ci.set_defaults(revision="current")
    _budget_options(ci, default_time=120.0)
    ci.add_argument("--corpus", default="corpus", help="the corpus to replay (default corpus/)")
    ci.add_argument("--results", default="results", help="JUnit, SARIF and new findings go here")
    _torch_options(ci, "RESULTS/corpus/torch")
    _report_option(ci)
    ci.set_defaults(func=cmd_ci)

    prove = sub.add_parser("prove", help="solve every arithmetic site of the model")
    _judges(prove, torch_flag=False)
    prove.add_argument("--json", action="store_true")
    prove.add_argument(
        "--time",
        type=_checked("time", float, check_seconds),
        help="seconds of exploration (default: all)",
    )
    prove.add_argument("--corpus", help="write the witnesses' findings to this folder")
    prove.add_argument(
        "--rank",
        type=int,
        action="append",
        choices=(3, 4, 5),
        help="only this input rank (default: 3, 4 and 5 on current; 3 on legacy, where every "
        "class has its witness and rank 4 takes minutes a shape)",
    )
    prove.add_argument("--no-judge", action="store_true", help="leave the native kernel out")
    prove.add_argument(
        "--no-cache",
        action="store_true",
        help="solve again, not from the answer this version of the model and solver left in "
        "the cache (~/.cache/convcheck; the new answer is stored)",
    )
    prove.add_argument("--sarif", help="also write the witnesses as SARIF to this file")
    prove.add_argument("--junit", help="also write JUnit XML (a test per site) to this file")
    prove.add_argument(
        "--against",
        choices=[*sorted(model.REVISIONS), "torch"],
        help="also solve for calls the revision accepts and this one rejects, or the reverse; "
        "'torch': against torch's checks before its backend (torch_oracle's Python), each "
        "witness confirmed by real torch; rank 3 unless --rank (docs/solver.md)",
    )
    prove.set_defaults(func=cmd_prove)

    merge = sub.add_parser(
        "merge", help="merge corpora into OUT by signature, every case re-judged here"
    )
    merge.add_argument("out", help="the corpus folder to merge into (its entries take part)")
    merge.add_argument(
        "dirs",
        nargs="+",
        metavar="DIR",
        help="corpus folders, case files, raw fuzzer inputs (a ClusterFuzzLite corpus)",
    )
    merge.add_argument(
        "--prune", action="store_true", help="remove OUT's entries that vanished or changed"
    )
    _judges(merge)
    merge.set_defaults(func=cmd_merge)

    build = sub.add_parser(
        "build", help="build the embedded kernel, sanitized and plain, and solve its cases"
    )
    build.set_defaults(func=cmd_build)

    target = sub.add_parser("target", help="build a target from its sources; print its library")
    target.add_argument("kind", choices=["executorch"])
    target.add_argument("--source", required=True, help="the ExecuTorch checkout to build")
    target.add_argument(
        "--op",
        choices=registry.names(),
        default=registry.DEFAULT_OP,
        help="whose kernel to build (default: %(default)s)",
    )
    target.add_argument(
        "--gtest",
        metavar="FILE",
        help="build these tests (convcheck export gtest) against it, sanitized, and run each",
    )
    target.set_defaults(func=cmd_target)

    export = sub.add_parser("export", help="corpus entries in upstream's form: tests, reports")
    export.add_argument("form", choices=["gtest", "issue"])
    export.add_argument("entries", nargs="+", metavar="ENTRY", help="corpus entries")
    export.add_argument("--op", choices=registry.names(), help="the entries' op (checked)")
    export.add_argument(
        "--source", help="issue: run the entry's test on this ExecuTorch checkout, sanitized"
    )
    export.add_argument("--commit", help="issue: the checkout's ExecuTorch commit, if not git")
    export.set_defaults(func=cmd_export)
    return parser


def main(
    argv: Sequence[str] | None = None, stdout: TextIO = sys.stdout, stderr: TextIO = sys.stderr
) -> int:
    terminated = _terminate_as_interrupt()
    try:
        args = _parser().parse_args(argv)
        func: Callable[..., int] = args.func
        return func(args, stdout, stderr)
    except ConvcheckError as e:
        stderr.write(f"convcheck: {_one_line(str(e))}\n")
        return ERROR
    except KeyboardInterrupt:
        stderr.write("convcheck: interrupted\n")
        return ERROR
    except OSError as e:
        limit = _file_size_limit()
        if limit is None:
            return _internal_error(e, stderr)
        # Every write fails past it, temporary files first: the user's limit, not our bug.
        stderr.write(
            f"convcheck: cannot write a file: the file size limit (ulimit -f) is {limit} bytes "
            f"({type(e).__name__}: {_one_line(str(e), 200)})\n"
        )
        return ERROR
    except Exception as e:
        return _internal_error(e, stderr)
    finally:
        if terminated is not None:
            signal.signal(signal.SIGTERM, terminated)


def _terminate_as_interrupt() -> Any:
    """SIGTERM as SIGINT: a KeyboardInterrupt, so that every ``finally`` runs (the
    solver's processes are stopped) and the exit is one line; a campaign's own handler
    (``Judges.stop_on_signals``) takes over while it runs. The previous handler, to
    restore; None off the main thread, where no handler can be set."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    return signal.signal(signal.SIGTERM, interrupt)


def _file_size_limit() -> int | None:
    """The process's file size limit in bytes, None when there is none."""
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_FSIZE)
    return None if soft == resource.RLIM_INFINITY else soft


def _internal_error(e: Exception, stderr: TextIO) -> int:
    stderr.write(
        f"convcheck: internal error (a bug in convcheck): {type(e).__name__}: "
        f"{_one_line(str(e))}; {_save_traceback()}\n"
    )
    return ERROR


def _one_line(text: str, limit: int = 400) -> str:
    """A message as one printable line, whatever the value in it held."""
    text = " ".join(text.split()).encode("utf-8", "backslashreplace").decode()
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _save_traceback() -> str:
    try:
        fd, path = tempfile.mkstemp(prefix="convcheck-traceback-", suffix=".txt")
        with open(fd, "w", errors="backslashreplace") as f:
            f.write(traceback.format_exc())
    except OSError:
        return "the traceback could not be saved"
    return f"traceback in {path}"
