"""``--report report.html``: the campaign's table and a plot of findings over time, in
one file (the plot is an embedded PNG) that a browser opens and a CI job can archive.

The plot is the one people compare engines by: for each kind of finding, the count of
distinct findings against the seconds into the campaign. matplotlib draws it; it is an
extra (``pip install 'convcheck[report]'``), asked for only when a report is.
"""

from __future__ import annotations

import base64
import io
from collections import defaultdict
from html import escape
from pathlib import Path

from convcheck import files
from convcheck.describe import describe_case
from convcheck.errors import ConvcheckError
from convcheck.findings import FindingKind
from convcheck.report import (
    BugRow,
    bug_rows,
    case_legends,
    counted,
    torch_folder,
)
from convcheck.report_ci import ci_campaign_line, ci_corpus_line

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.3em; } h2 { font-size: 1.1em; margin-top: 1.5em; }
table { border-collapse: collapse; font-size: 0.9em; }
th, td { border-bottom: 1px solid #ddd; padding: 0.3em 0.6em; text-align: left;
         vertical-align: top; }
th { background: #f3f3f3; }
code { font-family: ui-monospace, monospace; font-size: 0.95em; }
.known { color: #888; } .legend { color: #666; font-size: 0.85em; }
img { max-width: 100%; }
.whole, .case span { white-space: nowrap; }
"""


def check_available() -> None:
    """Before a campaign, not after it: a report that cannot be drawn is a set-up error."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ConvcheckError("--report needs matplotlib: pip install 'convcheck[report]'") from None


def findings_over_time(first_found: dict[str, float], seconds: float) -> bytes:
    """The PNG: one step line per kind, distinct findings counted against seconds."""
    from matplotlib.figure import Figure

    times: dict[str, list[float]] = defaultdict(list)
    for key, found_at in first_found.items():
        times[key.split(" | ")[0]].append(found_at)  # a signature's kind comes first
    figure = Figure(figsize=(8, 3.6), dpi=100, layout="constrained")
    axes = figure.subplots()
    end = max([seconds, *first_found.values()])
    for kind in sorted(times):
        at = sorted(times[kind])
        about_kernel = FindingKind(kind).about_kernel
        axes.step(
            [0.0, *at, end],
            [0, *range(1, len(at) + 1), len(at)],
            where="post",
            label=f"{kind} ({len(at)})",
            linestyle="-" if about_kernel else "--",
            linewidth=2 if about_kernel else 1,
        )
    axes.set_xlabel("seconds into the campaign")
    axes.set_ylabel("distinct findings")
    axes.set_xlim(0, max(end, 1e-3) * 1.03)  # a finding at the very end stays visible
    axes.set_ylim(bottom=0)
    axes.grid(alpha=0.3)
    if times:
        axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small", frameon=False)
    else:
        axes.text(0.5, 0.5, "no findings", ha="center", va="center", transform=axes.transAxes)
    out = io.BytesIO()
    figure.savefig(out, format="png")
    return out.getvalue()


def _row(row: BugRow) -> str:
    f = row.finding
    # A case wraps between its parts, never inside one (``s=[1,2]`` stays whole).
    case = " ".join(f"<span>{escape(part)}</span>" for part in describe_case(f.case).split())
    cells = [
        f'<td class="whole">{escape(f.kind.value)}</td>',
        f'<td class="whole">{escape(row.found)}</td>',
        f"<td>{escape(row.bug)}</td>",
        f'<td class="whole"><code>{escape(row.c_line)}</code></td>',
        f"<td><code>{escape(row.cause)}</code></td>",
        f'<td class="case"><code>{case}</code></td>',
        f"<td>{escape(f.explanation)}</td>",
    ]
    mark = "" if row.new else ' class="known"'
    return f"<tr{mark}>" + "".join(cells) + "</tr>"


def _table(rows: list[BugRow]) -> str:
    head: tuple[str, ...] = (
        "kind",
        "found",
        "bug: upstream class, or current's fix",
        "C line",
        "root cause",
    )
    head += ("case", "why")
    return (
        "<table><tr>"
        + "".join(f"<th>{h}</th>" for h in head)
        + "</tr>\n"
        + "\n".join(_row(r) for r in rows)
        + "</table>"
    )


def campaign_section(run, torch_dir: Path | None) -> list[str]:
    """One campaign: the plot, the kernel's bugs, torch's own folded away."""
    rows = bug_rows(run)
    kernel = [r for r in rows if r.finding.kind is not FindingKind.TORCH_BUG]
    torch = [r for r in rows if r.finding.kind is FindingKind.TORCH_BUG]
    explored = run.stats.elapsed if run.stats.explored is None else run.stats.explored
    png = findings_over_time(run.stats.first_found, explored)
    parts = [
        "<h2>Findings over time</h2>",
        f'<img alt="distinct findings by kind against seconds" '
        f'src="data:image/png;base64,{base64.b64encode(png).decode()}">',
        f"<h2>Kernel bugs: {sum(r.finding.about_kernel for r in kernel)}</h2>",
        _table(kernel) if kernel else "<p>none</p>",
        f'<p class="legend">{escape("; ".join(case_legends(kernel)))}'
        f"{'; ' if kernel else ''}grey rows were in the corpus already</p>",
    ]
    if torch:
        where = f" (kept in {escape(files.shown(torch_dir))})" if torch_dir is not None else ""
        parts += [
            f"<details><summary>torch: {counted(len(torch), 'bug')} of its own{where}</summary>",
            _table(torch),
            "</details>",
        ]
    return parts


def page(title: str, body: list[str]) -> str:
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            "<title>convcheck report</title>",
            f"<style>{_STYLE}</style></head><body>",
            f"<h1>{escape(title)}</h1>",
            *body,
            "</body></html>\n",
        ]
    )


def write_page(path: Path, title: str, body: list[str]) -> Path:
    return files.write_atomically(path, page(title, body), "report file")


def fuzz_report(path: Path, run, args, summary: str) -> Path:
    return write_page(path, summary, campaign_section(run, torch_folder(run, args)))


def ci_report(path: Path, result, args) -> Path:
    """``convcheck ci --report``: the corpus's replay, then each campaign's section."""
    body = [f"<p>{escape(ci_corpus_line(result))}</p>"]
    for c in result.campaigns:
        body.append(f"<h1>{escape(ci_campaign_line(c))}</h1>")
        if c.run is not None:
            body += campaign_section(c.run, torch_folder(c.run, args))
    verdict = "FAILED" if result.failed else "passed"
    return write_page(path, f"convcheck ci on {args.target or args.revision}: {verdict}", body)
