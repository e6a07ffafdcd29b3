"""What each ``convcheck`` subcommand does: a function of (args, stdout, stderr) that
returns the exit code (``OK`` nothing found, ``FOUND`` findings, ``ERROR`` a usage or
set-up error). ``convcheck.cli`` parses the command line and calls one of them."""

from __future__ import annotations

import argparse
import importlib.metadata
import json
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from convcheck import engines, files, model, registry
from convcheck.case import Case
from convcheck.errors import ConvcheckError, InvalidCase
from convcheck.report import counted, describe_unknown, format_trace

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from convcheck.ops.convolution.against_torch import TorchDisagreement
    from convcheck.solver.revisions import Disagreement

OK, FOUND, ERROR = 0, 1, 2


def load_case(path: str, op: str = registry.DEFAULT_OP) -> Case:
    """A case file (a call of ``op``), or a corpus entry (whose case is the one a person
    wants to judge, explain or shrink again, a call of the op the entry names)."""
    from convcheck import corpus

    data = files.read_bytes(path, "case file")
    where = f"case file {files.shown(path)}"
    obj = files.parse_json(data, where, InvalidCase)
    if isinstance(obj, dict) and "format" in obj:
        return corpus.from_json(obj, Path(path)).case
    return registry.loads_case(data, source=where, op=op)


def example_paths() -> list[Path]:
    from convcheck.campaign import example_cases

    return example_cases()


def cmd_explain(args, stdout: TextIO, stderr: TextIO) -> int:
    paths = args.cases or [str(p) for p in example_paths()]
    found = False
    for path in paths:
        case = load_case(path, args.op)
        wrapped, exact, findings = model.classify(case, args.revision)
        found = found or bool(findings)
        if args.json:
            stdout.write(json.dumps(explain_json(wrapped, findings)) + "\n")
            continue
        stdout.write(f"== {files.shown(path)}\n{format_trace(wrapped, findings, args.verbose)}\n")
        if not wrapped.outcome.same_answer(exact.outcome):
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


def _open_judges(args, use_torch: bool | None = None, warm: bool = True):
    from convcheck.judges import Judges

    # Without --no-torch, torch judges wherever the op has a torch mapping (the judges
    # say so when its torch is not installed).
    if use_torch is None and getattr(args, "no_torch", False):
        use_torch = False
    check_map, compare = getattr(args, "check_map", None), getattr(args, "compare", "id")
    if (check_map is not None or compare != "id") and args.target is None:
        raise ConvcheckError(
            "--check-map and --compare verdict are for a --target with check ids of its own"
        )
    return Judges(
        revision=args.revision,
        target=args.target,
        jobs=args.jobs,
        use_torch=use_torch,
        timeout=args.timeout,
        check_map=check_map,
        compare=compare,
        warm=warm,  # a command judges at once: torch's workers start beside its own import
        op=args.op,
    )


def _unknown_ids(judges, stdout: TextIO) -> None:
    """The target's ids that no map reads, once, at the end."""
    text = describe_unknown(judges.ids.unknown)
    if text:
        stdout.write(text + "\n")


def _meta(args) -> dict[str, str | None]:
    meta: dict[str, str | None] = {"found_by": f"convcheck {args.command}"}
    # The installed version, without importing torch (seconds) for it.
    try:
        meta["torch_version"] = importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        meta["torch_version"] = None
    return meta


def cmd_judge(args, stdout: TextIO, stderr: TextIO) -> int:
    case = load_case(args.case, args.op)
    with _open_judges(args) as judges:
        judgement = judges.judge([case])[0]
        found = judges.findings(judgement)
    _unknown_ids(judges, stderr if args.json else stdout)
    if args.json:
        data = {name: o.to_json() for name, o in judgement.outcomes().items()}
        if judgement.torch is not None:
            data["torch"].update(judgement.torch.to_json())
        data["findings"] = [
            {"kind": f.kind, "signature": list(f.signature), "explanation": f.explanation}
            for f in found
        ]
        stdout.write(json.dumps(data) + "\n")
    else:
        for name, outcome in judgement.outcomes().items():
            stdout.write(f"{name:<11} {outcome.describe()}\n")
        for f in found:
            stdout.write(f"finding     {f.describe()}\n")
    return FOUND if found else OK


def cmd_fuzz(args, stdout: TextIO, stderr: TextIO) -> int:
    from convcheck import campaign, corpus
    from convcheck.progress import Progress
    from convcheck.report import campaign_summary, format_campaign, write_report

    corpus_dir = files.folder(Path(args.corpus), "corpus folder", probe=True)
    torch_dir = _torch_folder(args, corpus_dir)
    # Another op's entries are not this campaign's: the same signature is another bug there.
    known = {k for e in corpus.load_all(corpus_dir, torch_dir, args.op) for k in e.keys}
    _check_report(args)
    budget = _budget(args)
    if args.op == registry.DEFAULT_OP:
        from convcheck.ci import solve_ahead

        solve_ahead([args.engine], [args.revision], stderr)
    # --jobs 2 or more: shards judge (each with workers of its own); the judges here only
    # minimise, so their workers start when that begins.
    with (
        _open_judges(args, warm=args.jobs < 2) as judges,
        judges.stop_on_signals(),
        Progress(stderr, budget, args.engine) as progress,
    ):
        run = campaign.Campaign(
            judges, corpus_dir, _meta(args), progress, known, budget, torch_dir, shards=args.jobs
        )
        run.explore(engines.load(args.engine), args.seed)
        if not args.no_minimize:
            run.minimize_all(seconds=args.minimize_time)
    write_report(format_campaign(run, args), stdout)
    _unknown_ids(judges, stdout)
    kernel = any(f.about_kernel for f in run.found.values())
    if args.report:
        from convcheck import report_html

        summary = campaign_summary(run, args)
        html = lambda: report_html.fuzz_report(Path(args.report), run, args, summary)  # noqa: E731
        _write_html(html, kernel, stdout, stderr)
    if judges.stopped:
        stderr.write("convcheck: stopped by a signal; the report holds what was found until then\n")
    if run.too_few and not kernel:
        raise ConvcheckError(_too_few(run, args))
    # Known or new, a finding about the kernel is a finding (the exit codes' promise).
    return FOUND if kernel else OK


def _too_few(run, args) -> str:
    """Why a campaign judged (nearly) nothing, as far as it knows: "nothing found" would
    be a claim it cannot make."""
    from convcheck.report import counted

    judged = "no case" if run.stats.cases == 0 else f"only {counted(run.stats.cases, 'case')}"
    if run.shard_failures:
        why = f"its shards failed ({run.shard_failures[0]})"
    elif run.budget.seconds is not None and run.budget.seconds <= args.timeout:
        why = f"--time {run.budget.seconds:g} is not longer than --timeout {args.timeout:g}"
    else:
        why = "every case was cut at the deadline (a target that hangs, or too many --jobs"
        why += " to start on this machine)"
    return f"the campaign judged {judged} in {run.budget.describe()}: {why}"


def _torch_folder(args, corpus_dir: Path) -> Path:
    """Where torch's own bugs go (``--torch-bugs``, default the corpus's torch folder),
    proven writable before the campaign when torch judges."""
    from convcheck import corpus

    torch_dir = corpus.torch_folder(corpus_dir, args.torch_bugs and Path(args.torch_bugs))
    if not args.no_torch:
        files.folder(torch_dir, "torch folder", probe=True)
    return torch_dir


def _check_report(args) -> None:
    """``--report``: before a campaign, not after it, a report that cannot be drawn or
    written is a set-up error."""
    if args.report:
        from convcheck.report_html import check_available

        check_available()
        path = Path(args.report)
        # A folder, a FIFO or a device would be replaced (or refused) only after the
        # campaign: the report is one regular file.
        if path.is_dir() or path.name in ("", ".", ".."):
            raise ConvcheckError(
                f"--report {files.shown(args.report)}: is a folder; name the HTML file to "
                f"write in it (--report {files.shown(path / 'report.html')})"
            )
        if path.exists() and not path.is_file():
            raise ConvcheckError(f"--report {files.shown(args.report)}: is not a regular file")
        files.folder(path.parent, "report folder", probe=True)


def _write_html(write: Callable[[], Path], found: bool, stdout: TextIO, stderr: TextIO) -> None:
    """The HTML report after the run: when it cannot be written (a full disk), its one
    line goes to stderr and the exit code still says what was found."""
    try:
        stdout.write(f"report: {files.shown(write())}\n")
    except ConvcheckError as e:
        if not found:
            raise
        stderr.write(f"convcheck: {e}\n")


def _budget(args):
    """``--time``, ``--cases``, ``--until-first``: a case budget alone runs to its end, which
    is what makes it the same campaign on any machine; with neither, the default time."""
    from convcheck.campaign import Budget

    seconds = args.time
    if seconds is None and args.cases is None:
        seconds = args.default_time
    return Budget(seconds, args.cases, getattr(args, "until_first", False))


def cmd_replay(args, stdout: TextIO, stderr: TextIO) -> int:
    """Every entry by its kind, each judged by its own op's judges (with --op, or a
    --target, which is one op's kernel, that op's entries alone): the kernel's must be
    clean (or, with --expect-reproduce, still show their finding); torch's own bugs are
    reported, never the kernel's failure."""
    from convcheck import corpus
    from convcheck.findings import FindingKind

    only = args.op or (registry.DEFAULT_OP if args.target else None)
    entries = corpus.load_all(Path(args.corpus), op=only)
    failed = torch_bugs = torch_still = 0
    results: dict[int, list] = {}
    versions: dict[str, str | None] = {}  # torch's, as each op's torch judge names it
    used = []
    for op in sorted({type(e.case).OP for e in entries}) or [only or registry.DEFAULT_OP]:
        mine = [e for e in entries if type(e.case).OP == op]
        with _open_judges(argparse.Namespace(**{**vars(args), "op": op})) as judges:
            for entry, found in zip(mine, judges.evaluate([e.case for e in mine]), strict=True):
                results[id(entry)] = found
            versions[op] = judges.torch.torch_version if judges.torch is not None else None
        used.append(judges)
    for entry in entries:
        found = results[id(entry)]
        torch_version = versions[type(entry.case).OP]
        keys = {f.key for f in found}
        if entry.kind == FindingKind.TORCH_BUG:
            torch_bugs += 1
            torch_still += entry.key in keys
            if torch_version is None:
                status = "torch's own bug: not replayed (--no-torch)"
            elif entry.key in keys:
                status = f"torch's own bug: still in torch {torch_version}"
            else:
                status = f"torch's own bug: gone in torch {torch_version}"
            stdout.write(f"{entry.name:<60} {status}\n")
            continue
        if args.expect_reproduce:
            ok = entry.key in keys
            status = "reproduces" if ok else "does NOT reproduce"
        else:
            kernel = [f for f in found if f.about_kernel]
            ok = not kernel
            status = "clean" if ok else "; ".join(f.describe() for f in kernel)
        failed += not ok
        stdout.write(f"{entry.name:<60} {status}\n")
    kernel_entries = len(entries) - torch_bugs
    summary = f"{counted(len(entries), 'entry', 'entries')}, "
    summary += f"{kernel_entries - failed} passed, {failed} failed"
    if torch_bugs:
        summary += f"; {torch_bugs} of torch's own bugs, never the kernel's"
        torch_version = versions.get(registry.DEFAULT_OP) or next(iter(versions.values()))
        if torch_version is not None:
            summary += f" ({torch_still} still in torch {torch_version})"
    stdout.write(summary + "\n")
    for judges in used:
        _unknown_ids(judges, stdout)
    return FOUND if failed else OK


def cmd_minimize(args, stdout: TextIO, stderr: TextIO) -> int:
    from convcheck.shrink import Shrinker

    case = load_case(args.case, args.op)
    with _open_judges(args) as judges, judges.stop_on_signals():
        found = judges.evaluate([case])[0]
        if args.kind:
            found = [f for f in found if f.kind == args.kind]
        if judges.stopped and not found:
            raise ConvcheckError("minimize: stopped by a signal before the case was judged")
        if not found:
            stderr.write(
                "convcheck: the case shows no finding"
                + (f" of kind {args.kind}" if args.kind else "")
                + "\n"
            )
            return OK
        target = found[0]
        shrinker = Shrinker(judges.keeps(target.signature, case))
        small = shrinker.shrink(case)
    stdout.write(f"finding: {target.describe()}\nsignature: {target.key}\n")
    if args.verbose:
        stdout.write(f"{shrinker.evaluations} calls, by pass in the order they ended:\n")
        stdout.writelines(f"  {p.describe()}\n" for p in shrinker.passes)
    stdout.write(json.dumps(small.to_json(), indent=2) + "\n")
    wrapped, _, model_findings = model.classify(small, args.revision)
    stdout.write(format_trace(wrapped, model_findings) + "\n")
    if judges.stopped:
        stderr.write("convcheck: stopped by a signal; the case shown is as far as it shrank\n")
    return FOUND


def cmd_ci(args, stdout: TextIO, stderr: TextIO) -> int:
    from convcheck import corpus
    from convcheck.ci import run_ci
    from convcheck.native.build import build_library
    from convcheck.report_ci import format_ci

    # Set-up errors before the build and the workers: a corpus that cannot be read, a
    # results folder that cannot be written.
    # The op's entries: another op's calls are not this kernel's to replay.
    entries = corpus.load_all(Path(args.corpus), op=args.op)
    files.folder(Path(args.results), "results folder", probe=True)
    _check_report(args)
    if args.target is None and registry.get(args.op).native is not None:
        build_library(args.revision, sanitized=True, op=args.op)
    with _open_judges(args) as judges, judges.stop_on_signals():
        result = run_ci(
            judges,
            entries,
            Path(args.results),
            _budget(args),
            args.seed,
            stderr,
            args.minimize_time,
            args.torch_bugs and Path(args.torch_bugs),
            shards=args.jobs,
        )
    stdout.write(format_ci(result, args.show_torch_bugs) + "\n")
    _unknown_ids(judges, stdout)
    results = files.shown(args.results)
    stdout.write(f"results: {results}/junit.xml, {results}/results.sarif\n")
    if args.report:
        from convcheck.report_html import ci_report

        html = lambda: ci_report(Path(args.report), result, args)  # noqa: E731
        _write_html(html, result.failed, stdout, stderr)
    if result.failed:
        return FOUND
    if result.unfinished:
        # Not every entry or campaign was judged: "nothing found" would be a claim the job
        # cannot make.
        raise ConvcheckError(f"ci: {result.unfinished}")
    return OK


def cmd_prove(args, stdout: TextIO, stderr: TextIO) -> int:
    """Every site of the model solved: exit 0 all proven, 1 a witness or an unknown."""
    from convcheck.solver import format_report, judge_witnesses
    from convcheck.solver.explore import default_ranks, shapes
    from convcheck.solver.prove import solved_report
    from convcheck.solver.symbolic import PROVEN

    only = shapes(args.revision, args.rank or default_ranks(args.revision, args.op), args.op)
    outputs = [(args.sarif, "SARIF file"), (args.junit, "JUnit file")]
    for name, what in outputs:
        if name:  # a file that cannot be written fails before the solving, not after
            files.folder(Path(name).parent, f"folder of the {what}", probe=True)
    if args.against == "torch":
        from convcheck.ops.convolution import against_torch, torch_oracle

        if args.op != against_torch.OP:
            raise ConvcheckError(f"--against torch: op={args.op!r} has no torch check path")
        if not torch_oracle.available():  # before the solving, not after it
            raise ConvcheckError("--against torch needs torch: pip install torch==2.13.0")
    # The proof is the model's: solved once per version of it (the judging is not cached).
    report = solved_report(args.revision, only, args.time, fresh=args.no_cache)
    if not args.no_judge:
        with _open_judges(args, use_torch=False) as judges:
            corpus_dir = Path(args.corpus) if args.corpus else None
            judge_witnesses(report, judges, corpus_dir, _meta(args))
    differ: Sequence[TorchDisagreement | Disagreement] = []
    counted: Sequence[TorchDisagreement | Disagreement] = []
    if args.against == "torch":
        # Rank 3 unless asked: each 2-D or 3-D shape takes minutes, even with small values.
        ranks = [s for s in against_torch.torch_shapes() if s.rank in (args.rank or [3])]
        differ = against_torch.disagreements(args.revision, ranks)
        counted = [d for d in differ if d.status in against_torch.COUNTED]
    elif args.against:
        from convcheck.solver.revisions import disagreements

        differ = counted = disagreements(
            args.revision, model.check_revision(args.against), only, op=args.op
        )
    if args.json:
        data = report.to_json()
        data["against"] = [d.to_json() for d in differ]
        stdout.write(json.dumps(data) + "\n")
    else:
        stdout.write(format_report(report) + "\n")
        for d in differ:
            stdout.write(f"{args.revision} vs {args.against}: {d.describe()}\n")
            stdout.write(f"         witness: {json.dumps(d.witness.to_json())}\n")
        if args.against:
            stdout.write(
                f"{args.revision} vs {args.against}: {len(differ)} disagreement(s), "
                f"{len(counted)} to look at\n"
            )
    if args.sarif or args.junit:
        from convcheck.solver import formats

        native = registry.get(args.op).native
        writers = (
            (args.sarif, "SARIF file", lambda report: formats.sarif(report, native)),
            (args.junit, "JUnit file", formats.junit_xml),
        )
        for name, what, text in writers:
            if name:
                files.write_atomically(Path(name), text(report), what)
    all_proven = report.complete and all(s.status == PROVEN for s in report.sites)
    return OK if all_proven and not counted else FOUND


def cmd_merge(args, stdout: TextIO, stderr: TextIO) -> int:
    """Exit 1 when the merge has something to review: new, changed or vanished."""
    from convcheck.merge import merge, read_folder

    # Every folder read before the workers start: a bad file is exit 2 at once.
    for directory in args.dirs:
        read_folder(Path(directory), args.revision, args.target, args.op)
    with _open_judges(args) as judges, judges.stop_on_signals():
        result = merge(
            judges, Path(args.out), [Path(d) for d in args.dirs], _meta(args), args.prune
        )
    stdout.write(result.describe() + "\n")
    return FOUND if result.differs else OK


def cmd_build(args, stdout: TextIO, stderr: TextIO) -> int:
    from convcheck.native.build import build_library

    for revision in sorted(model.REVISIONS):
        for sanitized in (True, False):
            path = build_library(revision, sanitized=sanitized)
            stdout.write(f"{revision:<8} {'sanitized' if sanitized else 'plain':<9} {path}\n")
    from convcheck.ci import solve_ahead

    # Solved once here, not by whichever campaign comes first (make test builds first).
    solve_ahead(engines.names(), sorted(model.REVISIONS), stdout, always=True)
    return OK


def cmd_target(args, stdout: TextIO, stderr: TextIO) -> int:
    from convcheck import targets
    from convcheck.ops.convolution.executorch_source import PREFIX

    if args.gtest is not None:
        from convcheck.export import run_gtests
        from convcheck.ops.convolution import upstream

        if args.op != registry.DEFAULT_OP:
            raise ConvcheckError(f"--gtest: op {args.op} has no exported tests to build")
        return run_gtests(upstream, args.source, Path(args.gtest), stdout)

    from convcheck.ci import solve_ahead

    stdout.write(f"{targets.build(PREFIX, args.source, args.op)}\n")
    solve_ahead(engines.names(), sorted(model.REVISIONS), stderr)
    op = "" if args.op == registry.DEFAULT_OP else f"--op {args.op} "
    stderr.write(f"use it as: {op}--target {PREFIX}{args.source}\n")
    return OK
