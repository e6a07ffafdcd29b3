"""``prove``'s report for CI systems: SARIF (a result per witness, at the C line of our
kernel where the site is) and JUnit (a test per site and kind of misbehaviour)."""

from __future__ import annotations

import functools
import json
import re
from xml.sax.saxutils import escape, quoteattr

from convcheck.native.build import source_folder
from convcheck.ops.convolution.native import KERNEL
from convcheck.report_ci import junit_suite
from convcheck.solver.prove import ProofReport, SiteReport
from convcheck.solver.symbolic import PROVEN, UNKNOWN


def c_location(revision: str, site: SiteReport) -> tuple[str, int]:
    """The C line of the site: where the sanitized kernel stopped on the witness, else the
    first line of the step that holds it (a site is ``<step>.<operation>``, and step
    ``<step>`` is ``step_<step>`` in the revision's file or ``cc_step_<step>`` in the
    shared one)."""
    folder = source_folder(KERNEL)
    found = re.search(r"(\w+\.c):(\d+)", site.crash_site)
    if found:
        return f"{folder}/{found.group(1)}", int(found.group(2))
    step = site.site.split(".")[0]
    for name, function in ((f"checks_{revision}.c", f"step_{step}"), ("checks_shared.c", "")):
        line = _definitions(name).get(function or f"cc_step_{step}")
        if line is not None:
            return f"{folder}/{name}", line
    return f"{folder}/convcheck.c", 1


@functools.cache
def _definitions(name: str) -> dict[str, int]:
    lines = (KERNEL.directory / name).read_text().splitlines()
    pattern = re.compile(r"^(?:static )?const char \*(\w+)\(")
    return {m.group(1): i for i, text in enumerate(lines, 1) if (m := pattern.match(text))}


def _key(site: SiteReport) -> str:
    return f"{site.site} ({site.kind})"


def sarif(report: ProofReport) -> str:
    """SARIF 2.1.0: a rule per kind of misbehaviour, a result per site with a witness."""
    results = []
    for site in report.sites:
        if site.witness is None:
            continue
        uri, line = c_location(report.revision, site)
        text = f"{_key(site)} on {site.witness_path}; witness: {site.witness.dumps()}"
        if site.judged:
            text += f"; judged: {site.judged}"
        results.append(
            {
                "ruleId": site.kind,
                "level": "error" if site.undefined else "warning",
                "message": {"text": text},
                "partialFingerprints": {"convcheckSite": f"{report.revision}:{_key(site)}"},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": {"uri": uri},
                            "region": {"startLine": line},
                        }
                    }
                ],
            }
        )
    kinds = sorted({s.kind for s in report.sites if s.witness is not None})
    document = {
        "version": "2.1.0",
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "convcheck prove",
                        "rules": [{"id": k, "shortDescription": {"text": k}} for k in kinds],
                    }
                },
                "results": results,
            }
        ],
    }
    return json.dumps(document, indent=2) + "\n"


def junit_xml(report: ProofReport) -> str:
    """A test per site and kind: proven passes, a witness fails, unknown is an error."""
    cases = []
    for site in report.sites:
        attributes = (
            f'classname="convcheck.prove.{report.revision}" name={quoteattr(_key(site))} '
            f'time="{site.seconds:.3f}"'
        )
        paths = "\n".join(p.path for p in site.paths if p.status == site.status)
        if site.status == PROVEN:
            body = ""
        elif site.status == UNKNOWN:
            body = f'<error message="the solver ran out of time">{escape(paths)}</error>'
        else:
            detail = f"witness: {site.witness.dumps()}\n" if site.witness else ""
            body = f'<failure message="witness">{escape(detail + paths)}</failure>'
        cases.append(f"  <testcase {attributes}>{body}</testcase>")
    return junit_suite(f"convcheck prove {report.revision}", cases, report.seconds)
