"""The ``convcheck`` command: each subcommand is a function of (args, stdout, stderr).

Exit codes everywhere: 0 nothing found, 1 findings, 2 a usage or set-up error.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path
from typing import TextIO

from convcheck import model
from convcheck.case import Case
from convcheck.errors import ConvcheckError
from convcheck.report import format_trace

OK, FOUND, ERROR = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is our exception, not a SystemExit from deep inside."""

    def error(self, message: str) -> None:
        raise ConvcheckError(f"{self.prog}: {message}")


def load_case(path: str) -> Case:
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise ConvcheckError(f"case file {path}: {e.strerror}") from None
    return Case.loads(text, source=f"case file {path}")


def example_paths() -> list[Path]:
    folder = resources.files("convcheck") / "examples"
    return sorted(Path(str(p)) for p in folder.iterdir() if p.name.endswith(".json"))


def cmd_explain(args, stdout: TextIO, stderr: TextIO) -> int:
    paths = args.cases or [str(p) for p in example_paths()]
    found = False
    for path in paths:
        case = load_case(path)
        wrapped, exact, findings = model.classify(case, args.revision)
        found = found or bool(findings)
        if args.json:
            stdout.write(json.dumps(explain_json(wrapped, findings)) + "\n")
            continue
        stdout.write(f"== {path}\n{format_trace(wrapped, findings, args.verbose)}\n")
        if not model.same_answer(wrapped.outcome, exact.outcome):
            stdout.write(f"exact arithmetic: {exact.outcome.describe()}\n")
        stdout.write("\n")
    return FOUND if found else OK


def explain_json(run: model.ModelRun, findings) -> dict:
    outcome = run.outcome
    return {
        "revision": run.revision,
        "verdict": outcome.verdict,
        "check": outcome.check,
        "out_sizes": None if outcome.out_sizes is None else list(outcome.out_sizes),
        "ub": [{"site": e.site, "kind": e.kind} for e in run.ub],
        "narrowing": [
            {"site": e.site, "conversion": e.conversion, "value": e.value, "result": e.result}
            for e in run.narrowing
        ],
        "findings": [{"kind": f.kind, "site": f.site, "detail": f.detail} for f in findings],
    }


def _parser() -> _Parser:
    parser = _Parser(prog="convcheck", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    explain = sub.add_parser("explain", help="the model's trace for one or more cases")
    explain.add_argument("cases", nargs="*", help="case JSON files (default: bundled examples)")
    explain.add_argument("--revision", default="current", choices=sorted(model.REVISIONS))
    explain.add_argument("--json", action="store_true", help="one JSON object per case")
    explain.add_argument("--verbose", action="store_true", help="every arithmetic operation")
    explain.set_defaults(func=cmd_explain)
    return parser


def main(argv: Sequence[str] | None = None, stdout: TextIO = sys.stdout, stderr: TextIO = sys.stderr) -> int:
    try:
        args = _parser().parse_args(argv)
        func: Callable[..., int] = args.func
        return func(args, stdout, stderr)
    except ConvcheckError as e:
        stderr.write(f"convcheck: {e}\n")
        return ERROR
    except KeyboardInterrupt:
        stderr.write("convcheck: interrupted\n")
        return ERROR
