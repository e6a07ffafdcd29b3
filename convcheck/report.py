"""Text for people: the model's trace (``explain``)."""

from __future__ import annotations

from convcheck.case import Case
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


def describe_case(case: Case) -> str:
    """One line for a report: the shapes and the arguments that are not the default."""
    parts = [f"in {list(case.input.sizes)}", f"w {list(case.weight.sizes)}"]
    if case.bias is not None:
        other_dtype = "" if case.bias.dtype == case.input.dtype else f" {case.bias.dtype}"
        parts.append(f"b {list(case.bias.sizes)}{other_dtype}")
    if case.input.dtype != "float32":
        parts.append(case.input.dtype)
    for name in ("stride", "padding", "dilation"):
        parts.append(f"{name[0]}={list(getattr(case, name))}")
    if case.transposed:
        parts.append(f"transposed op={list(case.output_padding)}")
    if case.groups != 1:
        parts.append(f"groups={case.groups}")
    return " ".join(parts)


def format_campaign(run, args) -> str:
    """The final report: what ran, then one row per distinct finding, minimised."""
    from convcheck.known_bugs import bug_class

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
    lines.append(f"{len(findings)} distinct findings ({len(new)} new), torch's own bugs last:")
    findings.sort(key=lambda f: not f.about_kernel)
    for f in findings:
        mark = "new" if f.key in new else "known"
        first = stats.first_found.get(f.key)
        when = f"{first:.1f}s" if first is not None else ""
        lines.append(f"  {f.kind:<13} {mark:<5} {when:>7}  {' | '.join(f.signature[1:])}")
        known_bug = bug_class(f.signature)
        if known_bug:
            lines.append(f"      bug class (upstream thread): {known_bug}")
        lines.append(f"      case: {describe_case(f.case)}")
        lines.append(f"      why:  {f.explanation}")
    if run.corpus_dir is not None:
        lines.append(f"corpus: {run.corpus_dir}/ (new findings written there)")
    return "\n".join(lines)


def _crash_location(finding) -> tuple[str, int] | None:
    """The C file and line a sanitizer named, for code-scanning UIs."""
    import re

    for outcome in finding.outcomes.values():
        match = re.search(r"(\w+\.c):(\d+)", outcome.crash_site or "")
        if outcome.verdict == "crash" and match:
            return f"convcheck/native/{match.group(1)}", int(match.group(2))
    return None


def junit_xml(result) -> str:
    """One test case per corpus entry (it must be handled cleanly) and per campaign."""
    from xml.sax.saxutils import escape, quoteattr

    cases = []
    for r in result.replayed:
        body = ""
        kernel = [f for f in r.findings if f.about_kernel]
        if kernel:
            text = "\n".join(f.describe() for f in kernel)
            body = f"<failure message={quoteattr(kernel[0].describe())}>{escape(text)}</failure>"
        elif r.findings:  # torch's own bug: reported, not the kernel's failure
            body = f"<skipped message={quoteattr(r.findings[0].describe())}/>"
        name = quoteattr(r.entry.name)
        cases.append(f'  <testcase classname="convcheck.corpus" name={name}>{body}</testcase>')
    for c in result.campaigns:
        if c.skipped:
            body = f"<skipped message={quoteattr(c.skipped)}/>"
        elif c.new:
            text = "\n".join(f"{f.describe()}\n{f.case.dumps()}" for f in c.new)
            body = f'<failure message="{len(c.new)} new findings">{escape(text)}</failure>'
        else:
            body = ""
        name = quoteattr(f"{c.engine} ({c.cases} cases)")
        attributes = f'classname="convcheck.campaign" name={name} time="{c.seconds:.1f}"'
        cases.append(f"  <testcase {attributes}>{body}</testcase>")
    if result.unproven:
        text = escape("\n".join(result.unproven))
        body = f'<failure message="{len(result.unproven)} sites not proven">{text}</failure>'
        cases.append(f'  <testcase classname="convcheck.prove" name="current">{body}</testcase>')
    return junit_suite("convcheck", cases)


def junit_suite(name: str, cases: list[str], seconds: float | None = None) -> str:
    """The JUnit document around ``<testcase>`` lines, with its counts."""
    from xml.sax.saxutils import quoteattr

    failures, errors, skipped = (sum(f"<{tag}" in c for c in cases) for tag in _OUTCOMES)
    time = "" if seconds is None else f' time="{seconds:.3f}"'
    head = (
        f'<testsuite name={quoteattr(name)} tests="{len(cases)}" failures="{failures}" '
        f'skipped="{skipped}" errors="{errors}"{time}>'
    )
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', head, *cases, "</testsuite>"]
    return "\n".join(lines) + "\n"


_OUTCOMES = ("failure", "error", "skipped")


def sarif(result) -> dict:
    """SARIF 2.1.0: one rule per finding kind, one result per finding."""
    findings = [f for r in result.replayed for f in r.findings]
    findings += [f for c in result.campaigns for f in c.new]
    results = []
    for f in findings:
        entry = {
            "ruleId": f.kind,
            "level": "error",
            "message": {"text": f"{f.describe()} [{f.key}]; case: {f.case.dumps()}"},
            "partialFingerprints": {"convcheckSignature": f.key},
        }
        where = _crash_location(f)
        if where is not None:
            entry["locations"] = [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": where[0]},
                        "region": {"startLine": where[1]},
                    }
                }
            ]
        results.append(entry)
    kinds = sorted({f.kind for f in findings})
    return {
        "version": "2.1.0",
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "convcheck",
                        "rules": [
                            {"id": k, "shortDescription": {"text": k.description}} for k in kinds
                        ],
                    }
                },
                "results": results,
            }
        ],
    }


def format_ci(result) -> str:

    lines = []
    dirty = [r for r in result.replayed if any(f.about_kernel for f in r.findings)]
    torch_bugs = sum(1 for r in result.replayed if r.findings) - len(dirty)
    lines.append(
        f"corpus: {len(result.replayed)} entries replayed, {len(dirty)} not handled cleanly, "
        f"{torch_bugs} still torch's own bugs"
    )
    for r in dirty:
        lines.append(f"  {r.entry.name}: " + "; ".join(f.describe() for f in r.findings))
    for c in result.campaigns:
        if c.skipped:
            lines.append(f"campaign {c.engine}: skipped ({c.skipped})")
            continue
        summary = f"{c.cases:,} cases in {c.seconds:.1f} s, {len(c.new)} new findings"
        lines.append(f"campaign {c.engine}: {summary}")
        for f in c.new:
            lines.append(f"  {f.kind}: {f.explanation}")
            lines.append(f"    case: {describe_case(f.case)}")
            lines.append(f"    reproduce: {f.case.dumps()}")
    for line in result.unproven:
        lines.append(f"prove: NOT proven: {line}")
    lines.append("verdict: " + ("FAILED" if result.failed else "passed"))
    return "\n".join(lines)
