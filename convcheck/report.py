"""Text for people: the model's trace (``explain``)."""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from convcheck import corpus, files, model, registry
from convcheck.case import Case
from convcheck.check_ids import CHECK_IDS, Unknown
from convcheck.describe import case_legend, describe_case
from convcheck.findings import Finding, FindingKind
from convcheck.model import ModelFinding, ModelRun, predict
from convcheck.outcome import ACCEPT, CRASH, REJECT, Outcome


def format_trace(
    model_run: ModelRun, findings: Sequence[ModelFinding] = (), verbose: bool = False
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
    for narrowed in model_run.narrowing:
        lines.append(f"narrowing: {narrowed.describe()}")
    sanitized = predict(model_run, with_loops=True)
    if sanitized != model_run.outcome:
        lines.append(f"a sanitized build: {sanitized.describe()}")
    for finding in findings:
        lines.append(f"finding: {finding.describe()}")
    return "\n".join(lines)


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` and its noun, in the plural unless it is one: "1 kernel bug"."""
    return f"{count} {noun}" if count == 1 else f"{count} {plural or noun + 's'}"


@dataclass(frozen=True)
class BugRow:
    """One distinct bug as a report shows it (the text table and the HTML page)."""

    finding: Finding
    new: bool
    first_found: float | None  # seconds into the campaign
    # Findings of the same bug (``_one_bug``, ``_fixed_by``), shown in this row: one bug,
    # one row.
    others: tuple[Finding, ...] = ()
    # What the bug is called: its upstream class, or the check of the fixed revision that
    # stops its minimised case ("current: " and the check id); "" when neither says.
    bug: str = ""
    # Of a bug class the upstream thread names: known to the reader already.
    upstream: bool = False

    @property
    def cause(self) -> str:
        cause = " | ".join(_shown(self.finding))
        if self.others:
            ways = [self._told_apart(f) for f in self.others]
            cause += f" (+{len(self.others)} more: {', '.join(ways)})"
        return cause

    def root_cause(self, room: int | None = None) -> str:
        """The C line a sanitizer named, where it crashed (what an editor jumps to), then
        the cause. In ``room`` characters: the other findings counted, not named; then a
        crash's sanitizer kind left out (its C line says where); then the rest cut, the
        count kept."""
        where = f"{self.c_line} " if self.c_line else ""
        more = f" (+{len(self.others)} more)" if self.others else ""
        signature = _shown(self.finding)
        rest = " | ".join(signature[1:] if where else signature)
        for text in (where + self.cause, where + " | ".join(signature) + more, where + rest + more):
            if room is None or len(text) <= room:
                return text
        assert room is not None  # without one, the first text is returned
        return where + rest[: max(room - len(where) - len(more) - 3, 0)] + "..." + more

    def _told_apart(self, other: Finding) -> str:
        """What tells another finding of this row from its own: the kind, else the parts
        of the signature that differ."""
        if other.kind is not self.finding.kind:
            return other.kind
        own = self.finding.signature[1:]
        return " | ".join(part for part in other.signature[1:] if part not in own)

    @property
    def c_line(self) -> str:
        """A crash's own line: another finding of a crashing case is about another bug."""
        if self.finding.kind is not FindingKind.CRASH:
            return ""
        where = crash_line(self.finding)
        return "" if where is None else f"{where[0].rsplit('/', 1)[-1]}:{where[1]}"

    @property
    def found(self) -> str:
        if not self.new:
            return "known"
        return "" if self.first_found is None else f"{self.first_found:.1f}s"


def _shown(finding: Finding) -> tuple[str, ...]:
    """The signature after its kind, as a row reads: "kernel passes" (one key for a kernel
    that rejects at a later check and one that accepts) says which the kernel did."""
    parts = finding.signature[1:]
    kernel = finding.outcomes.get("native")
    if parts[-1:] != ("kernel passes",) or kernel is None:
        return parts
    if kernel.verdict == REJECT:
        return (*parts[:-1], f"kernel passes it, rejects at {kernel.check}")
    if kernel.verdict == ACCEPT:
        return (*parts[:-1], "kernel passes it, accepts")
    return parts


def bug_rows(run) -> list[BugRow]:
    """The campaign's findings, the kernel's first, the upstream thread's classes before
    the others; the findings of one bug (``_one_bug``, then ``_fixed_by``) in one row (the
    first by kind stands for them); findings with equal cases (one call that shows a bug
    in several ways) side by side, so that they can share a case line."""
    new = {f.key for f in run.new_findings()}
    kinds = list(FindingKind)
    revision = getattr(run.judges, "revision", None)
    found, minimised = _as_kept(run)

    def order(f: Finding):
        return kinds.index(f.kind), f.key

    by_bug: dict[str, list[Finding]] = {}
    for f in sorted(found, key=order):
        by_bug.setdefault(_one_bug(f) or f.key, []).append(f)
    # The bugs that one check of the fixed revision stops are one bug: one fix.
    # A group's upstream class, looked up once: every finding of a class's group has it.
    by_fix: dict[str, tuple[str, bool, list[Finding]]] = {}
    for label, members in by_bug.items():
        first = members[0]
        name = registry.op_of(first.case).bug_class(first.signature)
        upstream = name is not None
        name = name if first.about_kernel else None
        fixed = None
        if name is None and first.about_kernel and first.key in minimised:
            fixed = _fixed_by(first.case, revision)
        if fixed is not None and fixed.verdict == REJECT:
            label = name = f"{FIXED_REVISION}: {fixed.check}"
        elif fixed is not None:  # current takes the call: no check of it to group by
            name = f"{FIXED_REVISION}: accepts"
        by_fix.setdefault(label, (name or "", upstream, []))[2].extend(members)
    standing = [(name, up, sorted(members, key=order)) for name, up, members in by_fix.values()]
    # Rows of one call side by side, within their block: the thread's classes, the others.
    by_call: dict[tuple[bool, bool, Case], list[tuple[str, bool, list[Finding]]]] = {}
    for name, upstream, members in sorted(standing, key=lambda item: item[2][0].key):
        first = members[0]
        key = (not first.about_kernel, not upstream, first.case)
        by_call.setdefault(key, []).append((name, upstream, members))

    def place(item):
        (apart, unnamed, _), bugs = item
        return apart, unnamed, bugs[0][2][0].key

    def row(name: str, upstream: bool, members: list[Finding]) -> BugRow:
        """A bug is new when any of its findings is, found when the first of them was."""
        times = [run.stats.first_found[f.key] for f in members if f.key in run.stats.first_found]
        is_new = any(f.key in new for f in members)
        first_found = min(times, default=None)
        return BugRow(members[0], is_new, first_found, tuple(members[1:]), name, upstream)

    return [row(*bug) for _, bugs in sorted(by_call.items(), key=place) for bug in bugs]


def _as_kept(run) -> tuple[list[Finding], set[str]]:
    """The campaign's findings and the keys of the minimised ones, each finding the corpus
    had already with the corpus's case: that one was minimised before it was kept (when
    its entry says so: ``--no-minimize`` keeps them as found), the call the campaign met
    again is as it came (a campaign minimises only what is new)."""
    found = dict(run.found)
    minimised = set(run.minimized)
    again = [key for key in found if key in run.known]
    if again and run.corpus_dir is not None and run.corpus_dir.is_dir():
        # By op and key: one signature in two ops is two bugs.
        entries = corpus.load_all(run.corpus_dir, run.torch_dir)
        kept = {(type(e.case).OP, k): e for e in entries for k in e.keys}
        for key in again:
            entry = kept.get((type(found[key].case).OP, key))
            if entry is not None:
                found[key] = dataclasses.replace(found[key], case=entry.case)
                if entry.minimized:
                    minimised.add(key)
    return list(found.values()), minimised


# The revision that fixes legacy's checks (the upstream thread's PR).
FIXED_REVISION = "current"


def _fixed_by(case: Case, revision: str | None) -> Outcome | None:
    """What the fixed revision answers to a minimised case of an older revision: the
    check that rejects it is its bug's fix (one fix, one bug), or it accepts it. A
    minimised case is wrong in the one way that matters, so the check that stops it is
    the one its bug lacks; an unminimised one is not, and is never asked. None when the
    campaign's revision is the fixed one, or the fixed revision has undefined behaviour
    on the case too."""
    if revision is None or model.check_revision(revision) == FIXED_REVISION:
        return None
    outcome = predict(model.run(case, FIXED_REVISION), with_loops=True)
    return outcome if outcome.verdict in (ACCEPT, REJECT) else None


@functools.cache
def _step_of(op: str) -> dict[str, str]:
    """Each check id's step, from the op's revisions' own tables of checks."""
    return {
        check: step
        for revision in registry.get(op).revisions.values()
        for step, checks in revision.checks.items()
        for check in checks
    }


# Kinds whose signature ends in the model's site of undefined behaviour: one UB shows as
# an ordering or an overflow to the model and as a crash to a sanitized kernel.
_UB_KINDS = (FindingKind.CRASH, FindingKind.ORDERING, FindingKind.OVERFLOW)


def _one_bug(finding: Finding) -> str | None:
    """What findings one row stands for: a known bug class; else undefined behaviour at one
    site of the model, whichever way it showed (a crash, an ordering, an overflow); else,
    for the kernel parting from the model, the check where it parts, whichever way, and one
    computation however many checks read it (the op's ``report_groups``)."""
    if not finding.about_kernel:
        return None
    op = registry.op_of(finding.case)
    label = op.bug_class(finding.signature)
    if label is None and finding.kind in _UB_KINDS:
        return f"UB at {finding.signature[-1]}"
    if label is None and finding.kind is FindingKind.INFIDELITY:
        parted_at = finding.signature[1]
        step = _step_of(op.name).get(parted_at, parted_at)  # a step's own point: no check
        for name, steps in op.report_groups.items():
            if step in steps:
                return name.format(check=parted_at.removeprefix(step + "."))
        return f"the check at {parted_at}"  # a check wrong both ways is one bug
    return label


# One screen, what the report fits into when it can: lines of columns (docs/report.md,
# "The report"). A longer line counts as the screen lines it wraps to.
SCREEN_LINES = 50
SCREEN_COLUMNS = 120


def screen_lines(lines: list[str]) -> int:
    return sum(max(1, -(-len(line) // SCREEN_COLUMNS)) for line in lines)


def _to_look_at(row: BugRow) -> bool:
    """A bug a person has not seen: new in this campaign, and not one the thread names."""
    return row.new and not row.upstream


@dataclass(frozen=True)
class Fold:
    """How much of the table a report shows: whole, or folded to fit a screen."""

    cut: bool  # each row cut at the screen's width (``BugRow.root_cause``)
    with_case: Callable[[BugRow], bool]  # the rows whose minimised case is shown
    says: str  # how the count line introduces the table


FOLDS = (
    Fold(False, lambda row: True, "each with its minimised case:"),
    Fold(True, _to_look_at, "the new ones of no upstream class with their minimised case:"),
    Fold(True, lambda row: False, "each in its corpus file with its minimised case:"),
)


def format_table(rows: list[BugRow], fold: Fold = FOLDS[0]) -> list[str]:
    """Aligned columns, one row per bug, its minimised case on the line under it (the
    rows ``fold`` shows it for), then the legend of a case; rows whose cases are equal
    (one call that shows a bug in several ways) share that line."""
    head: tuple[str, ...] = (
        "kind",
        "found",
        "bug (upstream class, or current's fix)",
        "C line, root cause",
    )
    cells: list[tuple[str, ...]] = [(r.finding.kind.value, r.found, r.bug) for r in rows]
    if not any(r.bug for r in rows):  # neither an upstream class nor a fix to name
        head, cells = head[:2] + head[3:], [c[:2] for c in cells]
    widths = [max(len(c[i]) for c in [head, *cells]) for i in range(len(head) - 1)]
    # A third of the screen at most for a bug's name: a longer one pushes its own row's
    # cause along, not every row's.
    widths[-1] = min(widths[-1], SCREEN_COLUMNS // 3)

    def start(columns) -> str:
        return "  " + "".join(c.ljust(w) + "  " for c, w in zip(columns, widths, strict=False))

    cells = [
        (*c, r.root_cause(SCREEN_COLUMNS - len(start(c)) if fold.cut else None))
        for c, r in zip(cells, rows, strict=True)
    ]

    def line(columns) -> str:
        return (start(columns) + columns[-1]).rstrip()

    lines = [line(head)]
    shown = False
    for i, (row, columns) in enumerate(zip(rows, cells, strict=True)):
        lines.append(line(columns))
        shown = shown or fold.with_case(row)
        following = rows[i + 1].finding.case if i + 1 < len(rows) else None
        if following != row.finding.case and shown:
            lines.append(" " * (4 + widths[0]) + describe_case(row.finding.case))
            shown = False
    lines += [f"  ({legend})" for legend in case_legends(r for r in rows if fold.with_case(r))]
    return lines


def case_legends(rows: Iterable[BugRow]) -> list[str]:
    """How to read the case lines of ``rows``: their ops' legends, each once."""
    return list(dict.fromkeys(case_legend(row.finding.case) for row in rows))


def torch_folder(run, args) -> Path | None:
    """Where torch's own bugs are kept: ``--torch-bugs DIR``, else the corpus's torch/."""
    chosen = getattr(args, "torch_bugs", None)
    if chosen:
        return Path(chosen)
    return None if run.corpus_dir is None else run.corpus_dir / "torch"


def campaign_summary(run, args) -> str:
    stats = run.stats
    explored = stats.elapsed if stats.explored is None else stats.explored
    minimising = stats.elapsed - explored
    return (
        f"convcheck fuzz: revision {args.revision}"
        + (f", target {args.target}" if args.target else "")
        + f", engine {args.engine}, seed {args.seed}: "
        + f"{stats.cases:,} cases in {explored:.1f} s"
        + f" ({stats.cases / max(explored, 1e-9):,.0f}/s)"
        + (f", minimised in {minimising:.1f} s" if run.minimized else "")
        + _shard_failures(run)
    )


def _shard_failures(run) -> str:
    """Batches whose share a shard lost (it died or hung): those cases were not judged."""
    failures = run.shard_failures
    if not failures:
        return ""
    return f"; {counted(len(failures), 'shard failure')}, their cases unjudged ({failures[0]})"


def format_campaign(run, args) -> str:
    """The final report: what ran, one row per distinct bug of the kernel, minimised, and
    torch's own bugs as one counted line (``--show-torch-bugs``: as rows too); folded
    (``format_table``) until it fits one screen, the details left to the corpus files and
    the HTML report, as its last line says."""
    rows = bug_rows(run)
    kernel = [r for r in rows if r.finding.about_kernel]
    torch = [r for r in rows if r.finding.kind is FindingKind.TORCH_BUG]
    # Neither the kernel's nor torch's: convcheck's own failures, always shown.
    shown = kernel + [r for r in rows if r not in kernel and r not in torch]
    show_torch = getattr(args, "show_torch_bugs", False)
    if show_torch:
        shown += torch
    for fold in FOLDS:
        lines = [campaign_summary(run, args)]
        if kernel:
            new = sum(r.new for r in kernel)
            written = ""
            if new and run.corpus_dir is not None:
                written = f", written to {files.shown(run.corpus_dir)}/"
            says = fold.says if any(fold.with_case(r) for r in kernel) else FOLDS[-1].says
            lines.append(f"{counted(len(kernel), 'kernel bug')} ({new} new{written}), {says}")
        elif run.stats.cases == 0 or run.too_few:
            lines.append(f"{counted(run.stats.cases, 'case')} judged: nothing to say of the kernel")
        else:
            lines.append("no kernel bugs")
        if shown:
            lines += format_table(shown, fold)
        if torch and not show_torch:
            lines.append(torch_line(len(torch), torch_folder(run, args)))
        if kernel:
            lines.append(_details_line(run, args))
        # With ``--report``, a line more names the file.
        if screen_lines(lines) + bool(getattr(args, "report", None)) <= SCREEN_LINES:
            break
    return "\n".join(lines)


def _details_line(run, args) -> str:
    """Where what the table leaves out is: the corpus files and the HTML report."""
    where = []
    if run.corpus_dir is not None:
        where.append(f"{files.shown(run.corpus_dir)}/ (a file per finding: its case, every answer)")
    html = "the HTML report" if getattr(args, "report", None) else "--report FILE.html"
    return f"details: {'; '.join([*where, html + ' (every row whole)'])}"


def torch_line(count: int, folder: Path | None = None) -> str:
    """torch's own bugs in one line: not the kernel's, listed with --show-torch-bugs."""
    where = f", in {files.shown(folder)}" if folder is not None else ""
    return f"torch: {counted(count, 'bug')} of its own{where}; --show-torch-bugs lists them"


# A terminal's colours for the report: the same characters, easier to scan.
_TERMINAL_STYLES = [
    (r"(?m)^  kind .*$", "bold"),
    (r"(?m)^  (crash|infidelity|abi-violation|tool-error)\b", "bold red"),
    (r"(?m)^  (missing-check|over-strict|wrong-result|overflow|ordering)\b", "bold yellow"),
    (r"(?m)^ {8,}\S.*$", "cyan"),  # a case line, under its rows
    (r"(?m)^(torch: .*|details: .*|  \(tensors: .*)$", "dim"),
]


def write_report(text: str, stream) -> None:
    """The report on ``stream``: plain text, coloured on a terminal."""
    from rich.console import Console
    from rich.text import Text

    console = Console(file=stream, highlight=False)
    if not console.is_terminal or console.is_dumb_terminal:
        stream.write(text + "\n")
        return
    styled = Text(text)
    for pattern, style in _TERMINAL_STYLES:
        styled.highlight_regex(pattern, style)
    console.print(styled, soft_wrap=True)  # long lines go to the terminal as they are


def crash_line(finding) -> tuple[str, int] | None:
    """The source file and line a sanitizer named, when the kernel crashed."""
    for outcome in finding.outcomes.values():
        match = _SOURCE_LINE.search(outcome.crash_site or "")
        if outcome.verdict == CRASH and match:
            return match.group(1), int(match.group(2))
    return None


_SOURCE_LINE = re.compile(r"([\w./+-]+\.(?:c|cc|cpp|cxx|h|hpp)):(\d+)")


def describe_unknown(unknown: dict[str, Unknown]) -> str:
    """The ids no map or table knows, each once: how often, what the model says on those
    cases, the simplest of them; then the map the model's readings suggest."""
    if not unknown:
        return ""
    lines = [
        f"{len(unknown)} check ids of the target are not convcheck's (docs/checks.md); map "
        "them with --check-map FILE, or compare verdicts only with --compare verdict:"
    ]
    suggested = {}
    for check, seen in sorted(unknown.items()):
        says = ", ".join(f"{ours} {n}" for ours, n in seen.model_says.most_common())
        lines.append(
            f"  {check!r}: {seen.count} cases (the model: {says}), e.g. {describe_case(seen.case)}"
        )
        (ours,) = seen.model_says.most_common(1)
        if ours[1] == seen.count and ours[0] in CHECK_IDS:
            suggested[check] = ours[0]
    if suggested:
        lines.append(f"a map from the model's readings (one id each): {json.dumps(suggested)}")
    return "\n".join(lines)
