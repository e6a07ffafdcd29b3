"""Text for people: the model's trace (``explain``)."""

from __future__ import annotations

from convcheck.model import ModelFinding, ModelRun, predict


def format_trace(
    model_run: ModelRun, findings: list[ModelFinding] = (), verbose: bool = False
) -> str:
    """Each step with its arithmetic; wrapped, narrowed and undefined steps marked.

    Steps without arithmetic are one line; ``verbose`` shows every operation, otherwise
    only the steps that did arithmetic show their operations.
    """
    lines = [f"revision {model_run.revision}, {'exact' if model_run.exact else 'C'} arithmetic"]
    for number, step in enumerate(model_run.steps, 1):
        lines.append(f"{number:3d} {step.name:<20} {step.result}")
        for op in step.ops:
            if not (verbose or op.flag):
                continue
            mark = f"   <-- {op.flag}" if op.flag else ""
            lines.append(f"        {op.site:<40} {op.text} = {op.result}{mark}")
    lines.append(f"verdict: {model_run.outcome.describe()}")
    for event in model_run.ub:
        lines.append(f"undefined behaviour: {event.describe()}")
    for event in model_run.narrowing:
        lines.append(f"narrowing: {event.describe()}")
    sanitized = predict(model_run, with_loops=True)
    if sanitized != model_run.outcome:
        lines.append(f"a sanitized build: {sanitized.describe()}")
    for finding in findings:
        lines.append(f"finding: {finding.describe()}")
    return "\n".join(lines)


def format_campaign(run, args) -> str:
    """The final report: what ran, then one row per distinct finding, minimised."""
    from convcheck.engine import describe_case

    stats = run.stats
    findings = sorted(run.found.values(), key=lambda f: (f.kind, f.key))
    lines = [
        "",
        f"convcheck fuzz: revision {args.revision}"
        + (f", target {args.target}" if args.target else "")
        + f", engine {args.engine}, seed {args.seed}: "
        + f"{stats.cases:,} cases in {stats.elapsed:.1f} s"
        + f" ({stats.cases / max(stats.elapsed, 1e-9):,.0f}/s)",
    ]
    if not findings:
        lines.append("no findings")
        return "\n".join(lines)
    new = {f.key for f in run.new_findings()}
    lines.append(f"{len(findings)} distinct findings ({len(new)} new):")
    for f in findings:
        mark = "new" if f.key in new else "known"
        first = stats.first_found.get(f.key)
        when = f"{first:.1f}s" if first is not None else ""
        lines.append(f"  {f.kind:<13} {mark:<5} {when:>7}  {' | '.join(f.signature[1:])}")
        lines.append(f"      case: {describe_case(f.case)}")
        lines.append(f"      why:  {f.explanation}")
    if run.corpus_dir is not None:
        lines.append(f"corpus: {run.corpus_dir}/ (new findings written there)")
    return "\n".join(lines)
