"""What ``convcheck ci`` writes: its text, JUnit XML and SARIF, from its result (the
corpus replayed, each campaign's new findings, the sites not proven)."""

from __future__ import annotations

from convcheck import registry
from convcheck.describe import describe_case
from convcheck.report import crash_line, torch_line


def _crash_location(finding) -> tuple[str, int] | None:
    """The C file and line a sanitizer named, for code-scanning UIs."""
    where = crash_line(finding)
    if where is None:
        return None
    from convcheck.native.build import source_folder  # a C build's only when one crashed

    kernel = registry.op_of(finding.case).native
    folder = source_folder(kernel) if kernel is not None else "convcheck/native"
    return f"{folder}/{where[0].rsplit('/', 1)[-1]}", where[1]


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
    if result.unfinished:
        # The tests above that passed may only be unjudged: the job itself is an error.
        body = f"<error message={quoteattr(result.unfinished)}/>"
        cases.append(f'  <testcase classname="convcheck.ci" name="job">{body}</testcase>')
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


def _dirty(result) -> list:
    """The corpus entries the kernel no longer handles cleanly."""
    return [r for r in result.replayed if any(f.about_kernel for f in r.findings)]


def ci_corpus_line(result) -> str:
    dirty = _dirty(result)
    torch_bugs = sum(1 for r in result.replayed if r.findings) - len(dirty)
    return (
        f"corpus: {len(result.replayed)} entries replayed, {len(dirty)} not handled cleanly, "
        f"{torch_bugs} still torch's own bugs"
    )


def ci_campaign_line(c) -> str:
    if c.skipped:
        return f"campaign {c.engine}: skipped ({c.skipped})"
    few = ", too few to pass" if c.too_few else ""
    return (
        f"campaign {c.engine}: {c.cases:,} cases in {c.seconds:.1f} s{few}, "
        f"{len(c.new)} new findings"
    )


def format_ci(result, show_torch_bugs: bool = False) -> str:
    lines = [ci_corpus_line(result)]
    for r in _dirty(result):
        lines.append(f"  {r.entry.name}: " + "; ".join(f.describe() for f in r.findings))
    for c in result.campaigns:
        lines.append(ci_campaign_line(c))
        shown = [f for f in c.new if show_torch_bugs or f.kind != "torch-bug"]
        if len(shown) < len(c.new):
            lines.append("  " + torch_line(len(c.new) - len(shown)))
        for f in shown:
            lines.append(f"  {f.kind}: {f.explanation}")
            lines.append(f"    case: {describe_case(f.case)}")
            lines.append(f"    reproduce: {f.case.dumps()}")
    for line in result.unproven:
        lines.append(f"prove: NOT proven: {line}")
    verdict = "FAILED" if result.failed else result.unfinished or "passed"
    lines.append(f"verdict: {verdict}")
    return "\n".join(lines)
