"""A campaign's live progress: cases, cases per second, findings by kind, what is left.

On a terminal it is a rich display that redraws in place; anywhere else (a CI log, a
pipe, a test's buffer) it is a plain line every ``every`` seconds and one at the end, so
that a log keeps the campaign's course without a line per batch.

A ``Progress`` is the callback a ``Campaign`` calls after each batch and each minimised
finding: ``progress(cases, seconds, findings_by_kind, note)``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TextIO

from rich.console import Console, Group, RenderableType
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

# Plain lines in a log: often enough to see a campaign move, rare enough to read.
PLAIN_EVERY_SECONDS = 10.0


class Progress:
    def __init__(self, stream: TextIO, budget, label: str, every: float = PLAIN_EVERY_SECONDS):
        self.stream = stream
        self.budget = budget
        self.label = label
        self.every = every
        self.cases = 0
        self.seconds = 0.0
        self.kinds: dict[str, int] = {}
        self.note = ""
        self._judging_seconds = 0.0
        self._updated = time.monotonic()
        # A log's first line comes after ``every`` seconds too: a short run shows only
        # its last state.
        self._last_line = self._updated
        console = Console(file=stream, stderr=False, highlight=False)
        self._live = None
        if console.is_terminal and not console.is_dumb_terminal:
            from rich.live import Live

            # Transient: the report that follows replaces the display on the screen.
            self._live = Live(self, console=console, refresh_per_second=4, transient=True)
            self._live.start()

    def __call__(
        self, cases: int, seconds: float, kinds: Mapping[str, int], note: str = ""
    ) -> None:
        if cases != self.cases:
            self._judging_seconds = seconds
        self.cases, self.seconds, self.kinds = cases, seconds, dict(kinds)
        self.note = note or self.note
        self._updated = time.monotonic()
        if self._live is None and self._updated - self._last_line >= self.every:
            self._write_line()

    @property
    def live(self) -> bool:
        """On a terminal: a display redrawn in place."""
        return self._live is not None

    def close(self, failed: bool = False) -> None:
        """The display ends; a log gets the last state once more, unless the campaign
        failed (its error is then the last line, alone)."""
        if self._live is not None:
            self._live.stop()
            self._live = None
        elif not failed and self._last_line < self._updated:
            self._write_line()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, kind, value, traceback) -> None:
        self.close(failed=kind is not None)

    # -- what is shown ------------------------------------------------------------------
    def _elapsed(self) -> float:
        """Between two calls the clock runs on, so a terminal's display does not freeze
        for the length of a slow batch."""
        if self._live is None:
            return self.seconds
        return self.seconds + (time.monotonic() - self._updated)

    def _rate(self) -> float:
        """Cases per second of judging: minimising, which judges no new case, leaves it."""
        return self.cases / max(self._judging_seconds, 1e-9)

    def fraction(self, elapsed: float) -> float | None:
        """How much of the budget is spent (the larger share when there are two)."""
        shares = []
        if self.budget.seconds:
            shares.append(elapsed / self.budget.seconds)
        if self.budget.cases:
            shares.append(self.cases / self.budget.cases)
        return min(1.0, max(shares)) if shares else None

    def left(self, elapsed: float) -> str:
        parts = []
        if self.budget.seconds is not None:
            parts.append(f"{max(0.0, self.budget.seconds - elapsed):.0f} s")
        if self.budget.cases is not None:
            left = max(0, self.budget.cases - self.cases)
            guess = f" (~{left / self._rate():.0f} s)" if self.cases and left else ""
            parts.append(f"{left:,} cases{guess}")
        left = (" or ".join(parts) + " left") if parts else ""
        if self.budget.until_first:
            left += (", or " if left else "until ") + "the first finding"
        return left

    def findings_text(self) -> str:
        return ", ".join(f"{k} {n}" for k, n in sorted(self.kinds.items())) or "none yet"

    def line(self) -> str:
        """The plain line: a log's record of where the campaign stands."""
        left = self.left(self.seconds)
        return (
            f"[{self.seconds:6.1f}s] {self.label}: {self.cases:,} cases ({self._rate():,.0f}/s)"
            + (f", {left}" if left else "")
            + f"; findings: {self.findings_text()}"
            + (f"; {self.note}" if self.note else "")
        )

    def _write_line(self) -> None:
        self._last_line = time.monotonic()
        self.stream.write(self.line() + "\n")
        self.stream.flush()

    def __rich__(self) -> Group:
        elapsed = self._elapsed()
        # The numbers stay whole; the bar takes what the terminal's width leaves.
        head = Table.grid(padding=(0, 1), expand=True)
        head.add_column(no_wrap=True)
        row: list[RenderableType] = [Text(self.label, style="bold")]
        fraction = self.fraction(elapsed)
        if fraction is not None:
            head.add_column(ratio=1)
            row.append(ProgressBar(total=1.0, completed=fraction))
        head.add_column(no_wrap=True, overflow="ellipsis")
        left = self.left(elapsed)
        row.append(
            Text(
                f"{self.cases:,} cases  {self._rate():,.0f}/s  {elapsed:.1f} s"
                + (f"  {left}" if left else "")
            )
        )
        head.add_row(*row)
        findings = Text()
        for i, (kind, count) in enumerate(sorted(self.kinds.items())):
            style = "dim" if kind in ("torch-bug", "tool-error") else "bold red"
            findings.append(("  " if i else "") + f"{kind}\u00a0{count}", style=style)
        if not self.kinds:
            findings.append("none yet", style="dim")
        if self.note:
            findings.append(f"  ({self.note})", style="dim italic")
        # A grid, so that a line the terminal's width wraps stays under its label.
        below = Table.grid(padding=(0, 1))
        below.add_column(no_wrap=True)
        below.add_column()
        below.add_row(Text("  findings:", style="dim"), findings)
        return Group(head, below)
