"""Corpus entries in upstream's own form: ``convcheck export gtest`` (a GoogleTest per
entry, for the kernel's test file) and ``convcheck export issue`` (the report in Markdown).

What is about one kernel (its test utilities, its fixed check, its bug classes) is the
op's: the module ``upstream`` of its package (``convcheck/ops/convolution/upstream.py``).
Here: loading entries, the sanitizer's frame an entry recorded, and the report's layout.
"""

from __future__ import annotations

import importlib
import json
import tempfile
from pathlib import Path
from types import ModuleType
from typing import TextIO

from convcheck import corpus, registry
from convcheck.errors import ConvcheckError

__all__ = [
    "cmd_export",
    "first_frame",
    "gtest_file",
    "issue",
    "run_gtests",
    "torch_issue",
    "upstream_of",
]


def upstream_of(op: registry.Op) -> ModuleType:
    """The op's ``upstream`` module; an op without one cannot be exported."""
    name = f"{type(op).__module__}.upstream"
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name != name:
            raise
        raise ConvcheckError(f"op {op.name}: no upstream export ({name})") from None


def load(paths: list[str], op: str | None) -> list[corpus.Entry]:
    entries = [corpus.load(Path(p)) for p in paths]
    for entry in entries:
        if op is not None and registry.op_of(entry.case).name != op:
            raise ConvcheckError(f"{entry.path}: an entry of op {registry.op_of(entry.case).name}")
    return entries


def recorded(entry: corpus.Entry) -> dict:
    """The entry's file as written: its outcomes and torch version (``corpus.Entry`` keeps
    neither)."""
    assert entry.path is not None
    return json.loads(entry.path.read_text())


def outcomes(entry: corpus.Entry) -> dict:
    return recorded(entry).get("outcomes", {})


def first_frame(entry: corpus.Entry) -> str | None:
    """Where the sanitizer stopped, as the entry recorded it, and on what: the entry's
    target, or convcheck's own C kernel of the entry's revision."""
    where = entry.target or f"convcheck's {entry.revision} kernel"
    for judge in ("native", "native_run"):
        crash = outcomes(entry).get(judge, {}).get("crash")
        if crash:
            return f"{crash['kind']} at {crash['site']} ({where})"
    return None


def gtest(entry: corpus.Entry) -> str:
    upstream = upstream_of(registry.op_of(entry.case))
    return upstream.gtest(entry.case, entry.name, entry.key, first_frame(entry))


def gtest_file(entries: list[corpus.Entry]) -> str:
    """One test per entry, to paste into the kernel's test file."""
    head = "// Written by `convcheck export gtest`: one test per corpus entry.\n\n"
    return head + "\n".join(gtest(entry) for entry in entries)


def torch_issue(entry: corpus.Entry) -> str:
    """The report of one of torch's own bugs (``corpus/torch/``): the call as a script."""
    upstream = upstream_of(registry.op_of(entry.case))
    torch = outcomes(entry).get("torch", {})
    crash = torch.get("crash") or {}
    what = f"{crash['kind']} in `{crash['site']}`" if crash else entry.explanation
    return "\n".join(
        [
            f"# torch {recorded(entry).get('torch_version')}: {what}",
            "",
            f"convcheck signature: `{entry.key}`",
            "",
            "## The call",
            "",
            "```python",
            upstream.torch_repro(entry.case),
            "```",
            "",
            "## What torch does",
            "",
            entry.explanation,
            "",
        ]
    )


def issue(entry: corpus.Entry, run: dict | None) -> str:
    """The upstream report for ``entry``. ``run``: what running its test on a checkout
    gave (``report``, the trimmed sanitizer or failure text; ``environment``), if it ran."""
    upstream = upstream_of(registry.op_of(entry.case))
    label = upstream.bug_class(entry.signature) or entry.key
    frame = first_frame(entry)
    inner = (run or {}).get("function")
    function = f"`{upstream.FUNCTION}`" + (
        f" (in `{inner}`)" if inner and inner != upstream.FUNCTION else ""
    )
    torch = outcomes(entry).get("torch", {})
    torch_line = torch.get("verdict", "not run")
    if torch.get("check"):
        torch_line += f" ({torch['check']})"
    message = (torch.get("outcome") or {}).get("detail") or torch.get("detail")
    check, row = upstream.fix(entry.case)
    lines = [
        f"# {function}: {label}",
        "",
        f"convcheck signature: `{entry.key}`"
        + (f"; sanitizer's first frame: {frame}" if frame else ""),
        "",
        "## The call",
        "",
        "```json",
        json.dumps(entry.case.to_json(), indent=None),
        "```",
        "",
        "## What the kernel does",
        "",
    ]
    if run is not None:
        lines += ["```", run["report"].rstrip(), "```", ""]
    else:
        lines += ["(not run on a checkout: `convcheck export issue --source DIR`)", ""]
    lines += [
        "## What torch does with the same call",
        "",
        f"torch {recorded(entry).get('torch_version', '(unknown)')}: {torch_line}"
        + (f": `{message}`" if message else ""),
        "",
        "## The fix",
        "",
    ]
    if check is None:
        lines.append("The fixed kernel accepts this call (the test asserts its out sizes).")
    else:
        lines.append(f"Reject the call with the check `{check}` before the arithmetic that fails.")
        if row:
            lines += ["", "From convcheck's `docs/checks.md` (the fixed kernel's checks):", "", row]
    if run is not None:
        lines += ["", "## Environment", ""]
        lines += [f"- {key}: {value}" for key, value in run["environment"].items()]
    lines += [
        "",
        "## Test",
        "",
        f"For `{upstream.TEST_FILE}`: it fails on the kernel as it is (above) and passes once "
        "the kernel rejects the call:",
        "",
        "```cpp",
        gtest(entry).rstrip(),
        "```",
        "",
    ]
    return "\n".join(lines)


def cmd_export(args, stdout: TextIO, stderr: TextIO) -> int:
    """``convcheck export gtest ENTRY...`` / ``convcheck export issue ENTRY``."""
    entries = load(args.entries, args.op)
    if args.form == "gtest":
        stdout.write(gtest_file(entries))
        return 0
    if len(entries) != 1:
        raise ConvcheckError(f"export issue: one entry, not {len(entries)}")
    (entry,) = entries
    if entry.kind == "torch-bug":
        stdout.write(torch_issue(entry))
        return 0
    run = None
    if args.source is not None:
        runner = upstream_of(registry.op_of(entry.case))
        with tempfile.TemporaryDirectory(prefix="convcheck-export-") as scratch:
            tests = Path(scratch) / "test.cpp"
            tests.write_text(gtest(entry))
            (result,) = runner.run_tests(args.source, tests)
        run = {
            "report": result.report if not result.passed else "(the test passes: no bug)",
            "function": result.function,
            "environment": runner.environment(args.source, args.commit),
        }
    stdout.write(issue(entry, run))
    return 0


def run_gtests(upstream: ModuleType, source: str, tests: Path, stdout: TextIO) -> int:
    """``convcheck target executorch --source DIR --gtest FILE``, for the op whose
    ``upstream`` module is given: each test's result; exit 1 when one fails."""
    results = upstream.run_tests(source, tests)
    stdout.writelines(f"{r.describe()}\n" for r in results)
    failed = sum(not r.passed for r in results)
    stdout.write(f"{len(results)} tests, {failed} failed\n")
    return 1 if failed else 0
