"""Merging corpora: the findings of many machines, shards or CI runs brought into one.

Every input is re-judged here, whatever its file says, so the merged corpus holds what
this machine's judges find (and follows any change to how signatures are made). Each
signature keeps its simplest witness (``simplicity.sort_key``: complexity, then the
case's JSON, so the result does not depend on the order of the folders). The report says
which signatures are new to the output folder, which recorded entries now show another
signature, and which show none any more.

What a folder may hold, read recursively (hidden files and folders left out):

* ``*.json``: a corpus entry (``convcheck fuzz``, ``ci``'s ``results/corpus``, a
  corpus's ``torch/`` folder) or a bare case;
* ``*.case``: a bare case (the seed corpus of ``.clusterfuzzlite/build.sh``);
* a name without a suffix: a raw fuzzer input (a ClusterFuzzLite corpus or a libFuzzer
  ``crash-<sha1>``), decoded as the harnesses decode it (``fuzzed.case_from_bytes``);
* anything else (``junit.xml``, ``results.sarif``) is counted as skipped, as is an entry
  or a case of another op than the merge's (one corpus folder holds every op's entries).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from convcheck import corpus, files, registry
from convcheck.case import Case
from convcheck.errors import ConvcheckError
from convcheck.findings import Finding, FindingKind
from convcheck.judges import Judges
from convcheck.simplicity import sort_key


@dataclass(frozen=True)
class Input:
    """One case to re-judge; ``entry`` when it came from a corpus entry."""

    source: str
    case: Case
    entry: corpus.Entry | None = None


@dataclass
class Merged:
    inputs: int = 0
    skipped: list[str] = field(default_factory=list)
    best: dict[str, tuple[Finding, str]] = field(default_factory=dict)  # key -> witness, source
    # Keys whose witness is a minimised entry's own case: the merged entry says so too.
    minimized: set[str] = field(default_factory=set)
    new: list[str] = field(default_factory=list)
    simpler: list[str] = field(default_factory=list)  # known keys given a simpler witness
    changed: list[tuple[str, str, list[str]]] = field(default_factory=list)  # source, old, new
    vanished: list[tuple[str, str]] = field(default_factory=list)  # source, old key
    pruned: list[str] = field(default_factory=list)

    @property
    def differs(self) -> bool:
        """Something for a person to review: exit 1."""
        return bool(self.new or self.changed or self.vanished)

    def describe(self) -> str:
        lines = [f"new       {key}   ({self.best[key][1]})" for key in self.new]
        lines += [f"simpler   {key}   ({self.best[key][1]})" for key in self.simpler]
        for source, old, now in self.changed:
            lines.append(f"changed   {old} -> {' ; '.join(now)}   ({source})")
        lines += [f"vanished  {old}   ({source})" for source, old in self.vanished]
        lines += [f"pruned    {name}" for name in self.pruned]
        lines.append(
            f"{self.inputs} inputs re-judged, {len(self.skipped)} files skipped: "
            f"{len(self.best)} signatures, {len(self.new)} new, {len(self.changed)} changed, "
            f"{len(self.vanished)} vanished"
        )
        return "\n".join(lines)


def read_folder(
    directory: Path, revision: str, target: str | None, op: str = registry.DEFAULT_OP
) -> tuple[list[Input], list[str]]:
    """The inputs of a folder of ``op``'s and the names of the files skipped (another op's
    among them). An entry of ``op`` recorded for another revision or target is an error:
    its signatures mean something else."""
    if not directory.is_dir():
        what = "does not exist" if not directory.exists() else "is not a folder"
        raise ConvcheckError(f"corpus folder {files.shown(directory)} {what}")
    inputs, skipped = [], []
    for path in _walk(directory):
        shown = files.shown(path)
        if path.suffix == ".json":
            try:
                data = files.read_bytes(path, "corpus file")
            except files.Vanished:  # removed since the listing (``corpus._load_listed``)
                continue
            obj = files.parse_json(data, f"corpus file {shown}")
            if isinstance(obj, dict) and ("format" in obj or "case" in obj):
                entry = corpus.parse(data, path)
                if entry.case.OP != op:
                    skipped.append(shown)
                    continue
                if (entry.revision, entry.target) != (revision, target):
                    raise ConvcheckError(
                        f"corpus file {shown}: recorded for revision {entry.revision}"
                        f"{f' target {entry.target}' if entry.target else ''}; this merge "
                        f"judges revision {revision}{f' target {target}' if target else ''}"
                    )
                inputs.append(Input(shown, entry.case, entry))
            else:
                _add_case(inputs, skipped, shown, _case(data, shown), op)
        elif path.suffix == ".case":
            case = _case(files.read_bytes(path, "case file"), shown)
            _add_case(inputs, skipped, shown, case, op)
        elif not path.suffix:
            case = _raw_case(files.read_bytes(path, "fuzzer input"), shown)
            _add_case(inputs, skipped, shown, case, op)
        else:
            skipped.append(shown)
    return inputs, skipped


def _add_case(inputs: list[Input], skipped: list[str], shown: str, case: Case, op: str) -> None:
    if case.OP == op:
        inputs.append(Input(shown, case))
    else:
        skipped.append(shown)


def _walk(directory: Path) -> list[Path]:
    found = []
    for root, dirs, names in os.walk(directory, onerror=_unreadable):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found += [Path(root) / n for n in sorted(names) if not n.startswith(".")]
    return found


def _unreadable(error: OSError) -> None:
    raise ConvcheckError(f"corpus folder {files.shown(error.filename)}: {error.strerror}")


def _case(data: bytes, shown: str) -> Case:
    return registry.loads_case(data, source=f"case file {shown}")


def _raw_case(data: bytes, shown: str) -> Case:
    try:
        from convcheck.fuzzed import case_from_bytes

        return case_from_bytes(data)
    except ImportError:
        raise ConvcheckError(
            f"fuzzer input {shown}: decoding raw fuzzer bytes needs atheris "
            "(pip install 'convcheck[fuzz]')"
        ) from None


def merge(
    judges: Judges, out_dir: Path, sources: list[Path], meta: dict, prune: bool = False
) -> Merged:
    """Merge ``sources`` into ``out_dir`` (whose own entries take part), every case
    re-judged by ``judges``; entries are written atomically, only when new or simpler."""
    files.folder(out_dir, "corpus folder", probe=True)
    result = Merged()
    own, result.skipped = read_folder(out_dir, judges.revision, judges.target, judges.op)
    inputs = list(own)
    for directory in sources:
        if directory.resolve() == out_dir.resolve():
            continue  # its entries take part already, once
        read, skipped = read_folder(directory, judges.revision, judges.target, judges.op)
        inputs += read
        result.skipped += skipped
    result.inputs = len(inputs)
    before = {i.entry.key: i for i in own if i.entry is not None}
    judged = judges.evaluate([i.case for i in inputs])
    if judges.stopped:
        raise ConvcheckError("merge: stopped by a signal; nothing was written")
    for item, found in zip(inputs, judged, strict=True):
        for finding in found:
            kept = result.best.get(finding.key)
            if kept is None or sort_key(finding.case) < sort_key(kept[0].case):
                result.best[finding.key] = (finding, item.source)
                shrunk = item.entry is not None and item.entry.minimized
                (result.minimized.add if shrunk else result.minimized.discard)(finding.key)
        if item.entry is not None:
            keys = [f.key for f in found]
            if not keys:
                result.vanished.append((item.source, item.entry.key))
            elif item.entry.key not in keys:
                result.changed.append((item.source, item.entry.key, keys))
    for key, (finding, _) in sorted(result.best.items()):
        old = before.get(key)
        if old is not None and old.case == finding.case:
            continue
        (result.new if old is None else result.simpler).append(key)
        # torch's own bugs go where campaigns put them: the corpus's torch folder.
        folder = corpus.torch_folder(out_dir) if finding.kind == FindingKind.TORCH_BUG else out_dir
        shrunk = key in result.minimized
        corpus.write(folder, finding, judges.revision, judges.target, meta, shrunk)
    if prune:
        for key, old in sorted(before.items()):
            if key not in result.best:
                # ``before`` holds the entries read from the corpus: each has its file.
                assert old.entry is not None and old.entry.path is not None
                _remove(old.entry.path)
                result.pruned.append(old.source)
    return result


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except OSError as e:
        raise ConvcheckError(
            f"corpus file {files.shown(path)}: cannot remove: {e.strerror}"
        ) from None
