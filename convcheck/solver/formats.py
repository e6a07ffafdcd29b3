"""``prove``'s report for CI systems: SARIF (a result per witness, at the C line of the
op's kernel where the site is) and JUnit (a test per site and kind of misbehaviour)."""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from convcheck.native.build import source_folder
from convcheck.registry import NativeKernel
from convcheck.report_ci import junit_suite
from convcheck.solver.prove import ProofReport, SiteReport
from convcheck.solver.symbolic import PROVEN, UNKNOWN


def c_location(native: NativeKernel, revision: str, site: SiteReport) -> tuple[str, int]:
    """The C line of the site in the op's kernel: where the sanitized kernel stopped on
    the witness, else the first line of the step that holds it (a site is
    ``<step>.<operation>``; step ``<step>`` is the function ``step_<step>`` of the
    revision's sources, else one whose name ends in ``_step_<step>``), else the first
    source's first line."""
    folder = source_folder(native)
    found = re.search(r"(\w+\.c):(\d+)", site.crash_site)
    if found:
        return f"{folder}/{found.group(1)}", int(found.group(2))
    step = site.site.split(".")[0]
    sources = native.sources[revision]
    for exact in (True, False):
        for name in sources:
            for function, line in _definitions(native.directory / name).items():
                if function == f"step_{step}" or (not exact and function.endswith(f"_step_{step}")):
                    return f"{folder}/{name}", line
    return f"{folder}/{sources[0]}", 1


@functools.cache
def _definitions(path: Path) -> dict[str, int]:
    """The functions a C file defines at the start of a line, by name, with their line."""
    pattern = re.compile(r"^(?:static )?[\w ]+?\**\s*\b(\w+)\(")
    lines = path.read_text().splitlines()
    return {m.group(1): i for i, text in enumerate(lines, 1) if (m := pattern.match(text))}


def _key(site: SiteReport) -> str:
    return f"{site.site} ({site.kind})"


def sarif(report: ProofReport, native: NativeKernel | None) -> str:
    """SARIF 2.1.0: a rule per kind of misbehaviour, a result per site with a witness,
    placed in ``native`` (the op's C kernel; without one, no place is named)."""
    results = []
    for site in report.sites:
        if site.witness is None:
            continue
        text = f"{_key(site)} on {site.witness_path}; witness: {site.witness.dumps()}"
        if site.judged:
            text += f"; judged: {site.judged}"
        result: dict[str, Any] = {
            "ruleId": site.kind,
            "level": "error" if site.undefined else "warning",
            "message": {"text": text},
            "partialFingerprints": {"convcheckSite": f"{report.revision}:{_key(site)}"},
        }
        if native is not None:
            uri, line = c_location(native, report.revision, site)
            where = {"artifactLocation": {"uri": uri}, "region": {"startLine": line}}
            result["locations"] = [{"physicalLocation": where}]
        results.append(result)
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
