"""A fuzz campaign: engines propose cases, the campaign judges, keeps and minimises.

An *engine* (``convcheck.engines``) proposes cases through ``campaign.submit`` until
``campaign.exhausted``. Everything else is here and shared: the judges, the budget,
deduplication by signature, the corpus written at once, minimisation, progress.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convcheck import corpus
from convcheck.case import Case
from convcheck.findings import Finding, FindingKind
from convcheck.judges import Confirmations, Judges
from convcheck.shrink import minimize
from convcheck.simplicity import complexity

if TYPE_CHECKING:
    from convcheck.shards import Judged, Shards

# An engine (``convcheck.engines``): ``explore(campaign, seed)`` proposes cases through
# ``campaign.submit`` until ``campaign.exhausted``.
Explore = Callable[["Campaign", int], None]

# What a campaign runs for when nothing else is said.
DEFAULT_SECONDS = 30.0
# Cases in a campaign's first batch; each next one is twice as large (``Campaign.batch``).
FIRST_BATCH = 8

# Called after each batch and each minimised finding, with the cases judged, the seconds
# since the start, the findings by kind and a note: ``convcheck.progress.Progress`` shows it.
ProgressHook = Callable[[int, float, Mapping[str, int], str], None]


@dataclass(frozen=True)
class Budget:
    """When a campaign ends: whichever limit comes first.

    A case budget with a seed makes a campaign deterministic (what tests use); a time
    budget depends on the machine's speed. ``until_first`` ends it at the first new
    finding about the kernel.
    """

    seconds: float | None = None
    cases: int | None = None
    until_first: bool = False

    def describe(self) -> str:
        limits = [] if self.seconds is None else [f"{self.seconds:.0f} s"]
        limits += [] if self.cases is None else [f"{self.cases:,} cases"]
        limits += ["the first finding"] if self.until_first else []
        return " or ".join(limits) or "no limit"

    def share(self, parts: int) -> Budget:
        """One of ``parts`` engines' equal share (``convcheck ci`` runs several)."""
        return Budget(
            None if self.seconds is None else self.seconds / parts,
            None if self.cases is None else max(1, self.cases // parts),
            self.until_first,
        )


@dataclass
class Stats:
    cases: int = 0
    started: float = field(default_factory=time.monotonic)
    first_found: dict[str, float] = field(default_factory=dict)  # signature key -> seconds
    explored: float | None = None  # seconds when the engine stopped (minimising follows)

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started


class Campaign:
    def __init__(
        self,
        judges: Judges,
        corpus_dir: Path | None = None,
        meta: dict[str, Any] | None = None,
        progress: ProgressHook | None = None,
        known: Iterable[str] = frozenset(),
        budget: Budget = Budget(seconds=DEFAULT_SECONDS),
        torch_dir: Path | None = None,
        shards: int = 1,
    ) -> None:
        self.judges = judges
        # ``shards`` >= 2: cases are judged in that many shard processes (``convcheck.shards``);
        # ``judges`` then only minimise.
        self.shards: Shards | None = None
        if shards >= 2:
            from convcheck.shards import Shards

            self.shards = Shards(judges, shards)
        self.budget = budget
        self.corpus_dir = corpus_dir
        # torch's own bugs: default the corpus's torch folder (corpus.torch_folder).
        self.torch_dir = torch_dir
        self.meta = meta or {}
        self.progress = progress
        self.known = set(known)  # signatures already in the corpus: not new
        self.found: dict[str, Finding] = {}
        # Each kept witness's rank: the simplest, then the first in the cases' order, so
        # that which one is kept does not depend on which shard answered first.
        self._ranks: dict[str, tuple[int, ...]] = {}
        self.minimized: set[str] = set()
        self.minimize_seconds: dict[str, float] = {}  # key -> seconds its shrinking took
        self.stats = Stats()
        # Foreseen native crashes, and rejections real torch accepts, this campaign has
        # confirmed (``Judges.judge``'s thrifty).
        self.confirmations: Confirmations = Counter()
        self._batches = 0  # judged so far: the first ones are small (``batch``)
        self._issued = 0  # batches and shards' requests handed out, in the cases' order
        self._chunks = 0  # the random engine's chunks the shards have generated
        self.shard_failures: list[str] = []  # how shards died or hung

    def explore(self, engine: Explore, seed: int) -> None:
        """The engine (``convcheck.engines.load(name)``) proposes cases until the budget
        is spent."""
        try:
            engine(self, seed)
        finally:
            if self.shards is not None:  # minimising is the parent's: free their memory
                self.shards.close()
        self.stats.explored = self.stats.elapsed
        self._show_progress()  # the final counts (the atheris engine adds its child's last)

    # -- what engines call ----------------------------------------------------------
    @property
    def exhausted(self) -> bool:
        if self.judges.stopped:
            return True
        budget = self.budget
        if budget.cases is not None and self.stats.cases >= budget.cases:
            return True
        if budget.seconds is not None and self.stats.elapsed >= budget.seconds:
            return True
        return budget.until_first and bool(self.new_findings(about_kernel=True))

    def batch(self, largest: int) -> int:
        """How many cases the next batch should hold: a few at first, so that the first
        findings come within a second of the workers being up, then twice as many each
        batch up to ``largest`` (large batches spread the workers' round trips); never
        more than the case budget has room for."""
        return self.room(min(largest, FIRST_BATCH << min(self._batches, 16)))

    def room(self, wanted: int) -> int:
        """How many of ``wanted`` cases the case budget still has room for."""
        if self.budget.cases is None:
            return wanted
        return max(0, min(wanted, self.budget.cases - self.stats.cases))

    @property
    def deadline(self) -> float | None:
        """When the time budget ends (``time.monotonic()``): a batch is cut short there,
        so a target that hangs cannot hold the campaign past it."""
        if self.budget.seconds is None:
            return None
        return self.stats.started + self.budget.seconds

    def submit(self, cases: list[Case]) -> list[list[Finding]]:
        """Judge the cases; keep every new signature at once. Returns each case's findings
        (none for a case the deadline or a stop left unjudged, which does not count)."""
        order = self._issue()
        per_case: list[list[Finding]]
        if self.shards is not None:
            from convcheck.shards import case_parts

            parts = case_parts(cases, self.shards.count)
            judged = self.shards.judge(parts, self.confirmations, self.deadline)
            per_case = [[] for _ in cases]
            for i, _, shown in judged.found:
                per_case[i] = shown
            self._take_shards(order, judged)
            return per_case
        judgements = self.judges.judge(cases, self.confirmations, self.deadline)
        per_case = [self.judges.findings(j) if j.complete else [] for j in judgements]
        answered = enumerate(zip(judgements, per_case, strict=True))
        found = [(i, j.judged_at, f) for i, (j, f) in answered if f]
        self._record(order, sum(j.complete for j in judgements), found)
        return per_case

    def submit_random(self, seed: int, largest: int) -> None:
        """With shards: judge the random engine's cases of ``seed`` until the budget is
        spent, in chunks (``generate.chunk``, which the shards generate) of a few
        cases at first, then twice as many each up to ``largest``. A shard is handed its
        next chunk as soon as it answers one, so no shard waits for another; findings are
        kept as each answer comes in. With a case budget and no time budget, the chunks'
        sizes, their cases and the crashes each sees confirmed follow from the seed alone
        (``Shards.stream``'s ``settled``): the same findings with any number of shards."""
        out = 0  # cases handed to the shards, not answered yet

        def next_part() -> dict[str, Any] | None:
            nonlocal out
            if self.exhausted:
                return None
            size = min(largest, FIRST_BATCH << min(self._chunks, 16))
            if self.budget.cases is not None:
                size = min(size, self.budget.cases - self.stats.cases - out)
            if size <= 0:
                return None
            chunk = [seed, self._chunks, size, self.judges.op]
            part = {"random": chunk, "size": size, "order": self._issue()}
            self._chunks += 1
            out += size
            return part

        def take(part: dict[str, Any], judged: Judged) -> None:
            nonlocal out
            out -= part["size"]
            self._take_shards(part["order"], judged)

        settled = self.budget.seconds is None and self.budget.cases is not None
        assert self.shards is not None
        self.shards.stream(next_part, take, self.confirmations, self.deadline, settled)

    def _issue(self) -> int:
        """The next batch's or request's place in the cases' order."""
        self._issued += 1
        return self._issued

    def _take_shards(self, order: int, judged: Judged) -> None:
        self.shard_failures += judged.failures
        # A shard that failed is started again; its cases are lost.
        note = f"{judged.failures[0]}, restarted" if judged.failures else ""
        self._record(order, judged.complete, judged.found, note)

    def _record(
        self,
        order: int,
        complete: int,
        found: list[tuple[int, float, list[Finding]]],
        note: str = "",
    ) -> None:
        """A batch (or a shard's request: the ``order``-th handed out) judged: ``complete``
        cases to the end, and for each case that showed findings its index, when it was
        judged, and its findings."""
        self._batches += 1
        self.stats.cases += complete
        for index, judged_at, findings in found:
            for finding in findings:
                key = finding.key
                rank = (complexity(finding.case), order, index)
                kept = self.found.get(key)
                if kept is None:
                    self._keep(finding, judged_at - self.stats.started)
                    self._ranks[key] = rank
                elif key not in self.minimized and rank < self._ranks.get(
                    key, (complexity(kept.case),)
                ):
                    # A simpler witness of a known finding: shrinking starts from the best.
                    self.found[key] = finding
                    self._ranks[key] = rank
        self._show_progress(note)

    def _keep(self, finding: Finding, seconds: float) -> None:
        self.found[finding.key] = finding
        self.stats.first_found[finding.key] = seconds
        if finding.key not in self.known:
            self._write(finding)

    @property
    def torch_folder(self) -> Path | None:
        """Where torch's own bugs are written (None: nowhere)."""
        if self.corpus_dir is None:
            return None
        return corpus.torch_folder(self.corpus_dir, self.torch_dir)

    def _write(self, finding: Finding) -> None:
        if self.corpus_dir is None:
            return
        folder = self.torch_folder if finding.kind == FindingKind.TORCH_BUG else self.corpus_dir
        assert folder is not None
        minimized = finding.key in self.minimized
        corpus.write(
            folder, finding, self.judges.revision, self.judges.target, self.meta, minimized
        )

    # -- after the engines ----------------------------------------------------------
    def minimize_all(
        self,
        max_evaluations: int = 600,
        seconds_each: float = 20.0,
        only: Callable[[Finding], bool] | None = None,
        seconds: float | None = None,
        torch_bugs: bool = False,
    ) -> None:
        """Shrink every new finding, each within ``seconds_each`` and all of them within
        ``seconds``; what the time leaves unshrunk is kept as found. torch's own bugs are
        left as found unless ``torch_bugs`` (``convcheck minimize`` shrinks one on
        demand): they are not the kernel's, and their candidates are the slow ones (real
        computation, torch crashing). A stop (a signal) ends it: after one, every
        candidate is unjudged and so fails at once."""
        ends = None if seconds is None else time.monotonic() + seconds
        for key, finding in list(self.found.items()):
            left = seconds_each if ends is None else min(seconds_each, ends - time.monotonic())
            if self.judges.stopped or left <= 0:
                break
            # Known findings are in the corpus already, in their minimised form.
            if key in self.minimized or key in self.known:
                continue
            if finding.kind is FindingKind.TOOL_ERROR:  # convcheck's own failure: nothing to shrink
                continue
            if finding.kind is FindingKind.TORCH_BUG and not torch_bugs:
                continue
            if only is not None and not only(finding):
                continue
            # The deadline goes to the judges too: a candidate that hangs is cut there.
            began = time.monotonic()
            deadline = began + left
            keeper = self.judges.keeps(finding.signature, finding.case, deadline)
            small = minimize(finding.case, keeper, max_evaluations, left)
            shown = keeper.found.get(small)
            if shown is None and small != finding.case:
                # Shrunk by the model alone (overflow, ordering): every judge's outcomes
                # for the corpus entry.
                shown = next((f for f in self.judges.evaluate([small])[0] if f.key == key), None)
            # Minimised, even when nothing smaller kept the signature: the entry says so,
            # or a later campaign's rows would group it otherwise (``report._as_kept``).
            shown = finding if shown is None else shown
            self.found[key] = shown
            self.minimized.add(key)
            if key not in self.known:
                self._write(shown)
            self.minimize_seconds[key] = time.monotonic() - began
            self._show_progress(note=f"minimised {finding.kind}")
        self._merge_equal_cases()

    def _merge_equal_cases(self) -> None:
        """New findings about the kernel whose minimised cases are one call are one bug
        showing in several ways: the first by kind (a crash before an infidelity) keeps
        the others' signatures in ``also``, and their corpus files go."""
        order = list(FindingKind)
        by_case: dict[str, list[str]] = {}
        for key in sorted(self.minimized):
            finding = self.found.get(key)
            if finding is None or key in self.known or not finding.about_kernel:
                continue
            by_case.setdefault(json.dumps(finding.case.to_json(), sort_keys=True), []).append(key)
        for keys in by_case.values():
            if len(keys) < 2:
                continue
            keys.sort(key=lambda k: order.index(self.found[k].kind))
            kept, *merged = keys
            also = tuple(self.found[k].signature for k in merged)
            finding = self.found[kept]
            finding = dataclasses.replace(finding, also=finding.also + also)
            self.found[kept] = finding
            for key in merged:
                del self.found[key]
                if self.corpus_dir is not None:
                    corpus.remove(self.corpus_dir, also[merged.index(key)], type(finding.case).OP)
            self._write(finding)

    @property
    def too_few(self) -> bool:
        """Judged too few cases to say anything of the kernel: not even the first batch's,
        when the budget asked for more and no signal stopped it (every case cut unjudged
        at the deadline: a target that hangs, workers still starting)."""
        wanted = FIRST_BATCH if self.budget.cases is None else min(FIRST_BATCH, self.budget.cases)
        return self.stats.cases < wanted and not self.judges.stopped

    def new_findings(self, about_kernel: bool = False) -> list[Finding]:
        """New this campaign; ``about_kernel`` leaves torch's own bugs out."""
        return [
            f
            for k, f in self.found.items()
            if k not in self.known and (f.about_kernel or not about_kernel)
        ]

    def _show_progress(self, note: str = "") -> None:
        if self.progress is not None:
            kinds: Counter[str] = Counter(f.kind for f in self.found.values())
            self.progress(self.stats.cases, self.stats.elapsed, kinds, note)


def example_cases() -> list[Path]:
    """The bundled examples: one valid call of each rank, and the thread's bugs."""
    from importlib import resources

    folder = resources.files("convcheck") / "examples"
    return sorted(Path(str(p)) for p in folder.iterdir() if p.name.endswith(".json"))
