"""The corpus: one small JSON file per distinct finding, replayed as a regression test.

A file is written atomically (a temporary file in the same folder, fsync, rename) the
moment a finding is new, and replaced by its minimised form later, under the same name:
the name comes from the signature, so a killed campaign leaves either the old file or the
new one, never half of either (``files.write_atomically``). The loader reads regular files
only, skips hidden ones (a concurrent writer's ``.tmp-*.json``), and refuses an entry it
cannot vouch for (an unknown format, revision or kind; a name that is not a plain file
name) with one error naming the file and the field.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from convcheck import files, registry
from convcheck.case import Case
from convcheck.errors import ConvcheckError, InvalidCase, value_repr
from convcheck.findings import (
    Finding,
    FindingKind,
    Signed,
    crash_site_family,
    function_family,
    parting,
    point,
)
from convcheck.model import REVISIONS
from convcheck.outcome import Outcome, Verdict

FORMAT_VERSION = 1
# torch's own bugs live apart from the kernel's findings, in this subfolder of a corpus
# (or a folder of the user's choosing): a kernel team replays and triages only its own.
TORCH_FOLDER = "torch"
# A name is shown in reports, used as a test id and as a file name: nothing else.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")


@dataclass(frozen=True)
class Entry(Signed):
    name: str
    kind: str
    signature: tuple[str, ...]
    revision: str
    target: str | None
    case: Case
    explanation: str
    path: Path | None = None
    also: tuple[tuple[str, ...], ...] = ()  # signatures merged into this entry
    # Its case shrunk (or left as found by a campaign's minimising), as the report's rows
    # assume when they name a bug by the fixed revision's check; entries from before the
    # field were.
    minimized: bool = True


def entry_name(signature: tuple[str, ...], op: str = registry.DEFAULT_OP) -> str:
    """The entry's file name: its signature's words and digest. Another op's entry starts
    with the op's name: one signature in two ops is two bugs, kept in two files."""
    named = signature if op == registry.DEFAULT_OP else (op, *signature)
    digest = hashlib.sha1(" | ".join(named).encode()).hexdigest()[:8]
    words = re.sub(r"[^a-z0-9]+", "-", " ".join(named[:3]).lower()).strip("-")
    return f"{words[:60].rstrip('-')}-{digest}"


def to_json(
    finding: Finding,
    revision: str,
    target: str | None,
    meta: dict[str, Any],
    minimized: bool = True,
) -> dict:
    return {
        "format": FORMAT_VERSION,
        "name": entry_name(finding.signature, type(finding.case).OP),
        "op": finding.case.OP,
        "kind": finding.kind,
        "signature": list(finding.signature),
        "revision": revision,
        "target": target,
        "explanation": finding.explanation,
        "case": finding.case.to_json(),
        "minimized": minimized,
        "outcomes": {judge: o.to_json() for judge, o in finding.outcomes.items()},
        **({"also": [list(s) for s in finding.also]} if finding.also else {}),
        **meta,
    }


def write(
    directory: Path,
    finding: Finding,
    revision: str,
    target: str | None,
    meta: dict,
    minimized: bool = True,
) -> Path:
    """Write (or replace) the finding's file atomically; returns its path. A folder that
    cannot take it is a ``ConvcheckError``; the entries written before stay whole."""
    files.folder(directory, "corpus folder")
    data = to_json(finding, revision, target, meta, minimized)
    text = json.dumps(data, indent=2, sort_keys=True) + "\n"
    return files.write_atomically(directory / f"{data['name']}.json", text, "corpus folder")


def remove(directory: Path, signature: tuple[str, ...], op: str = registry.DEFAULT_OP) -> None:
    """Remove the entry a signature of ``op`` names, if it is there (merged into another)."""
    (directory / f"{entry_name(signature, op)}.json").unlink(missing_ok=True)


def load(path: Path) -> Entry:
    """One entry; anything malformed is a ConvcheckError naming the file and the field."""
    return parse(files.read_bytes(path, "corpus file"), path)


def parse(data: bytes, path: Path) -> Entry:
    """An entry from the bytes of the file at ``path`` (which names it in errors)."""
    where = f"corpus file {files.shown(path)}"
    return from_json(files.parse_json(data, where), path)


def from_json(obj: Any, path: Path) -> Entry:
    """An entry from the decoded JSON of the file at ``path`` (which names it in errors)."""
    where = f"corpus file {files.shown(path)}"
    if not isinstance(obj, dict):
        raise ConvcheckError(f"{where}: expected a JSON object")
    for name in ("format", "kind", "signature", "revision", "case"):
        if name not in obj:
            raise ConvcheckError(f"{where}: field {name!r} is missing")
    if type(obj["format"]) is not int or obj["format"] != FORMAT_VERSION:
        raise ConvcheckError(
            f"{where}: format {value_repr(obj['format'])} is unknown (this convcheck reads "
            f"format {FORMAT_VERSION})"
        )
    for name, known in (("kind", tuple(FindingKind)), ("revision", tuple(REVISIONS))):
        if not isinstance(obj[name], str) or obj[name] not in known:
            raise ConvcheckError(
                f"{where}: {name} {value_repr(obj[name])} is unknown (known: {', '.join(known)})"
            )
    signature = obj["signature"]
    if not isinstance(signature, list) or not signature or not all(map(_is_text, signature)):
        raise ConvcheckError(
            f"{where}: signature must be a list of strings, got {value_repr(signature)}"
        )
    # Entries written before there was more than one op are convolution's.
    op = obj.get("op", registry.DEFAULT_OP)
    if not isinstance(op, str) or op not in registry.names():
        raise ConvcheckError(
            f"{where}: op {value_repr(op)} is unknown (known: {', '.join(registry.names())})"
        )
    kind, signature = obj["kind"], tuple(signature)
    if op == registry.DEFAULT_OP:  # only its entries are older than today's signatures
        kind, signature = _migrated(obj["kind"], signature, obj, where)
    also = obj.get("also", [])
    if not isinstance(also, list) or not all(
        isinstance(s, list) and s and all(map(_is_text, s)) for s in also
    ):
        raise ConvcheckError(
            f"{where}: also must be a list of signatures (lists of strings), got {value_repr(also)}"
        )
    name = obj.get("name", path.stem)
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ConvcheckError(
            f"{where}: name {value_repr(name)} is not a plain file name (letters, digits, . _ -)"
        )
    target = obj.get("target")
    if target is not None and not (isinstance(target, str) and target):
        raise ConvcheckError(
            f"{where}: target must be a library's path or null, got {value_repr(target)}"
        )
    explanation = obj.get("explanation", "")
    if not _is_text(explanation):
        raise ConvcheckError(f"{where}: explanation must be text, got {value_repr(explanation)}")
    _check_outcomes(obj.get("outcomes", {}), where)
    for meta in ("torch_version", "found_by"):
        value = obj.get(meta)
        if value is not None and not _is_text(value):
            raise ConvcheckError(f"{where}: {meta} must be text or null, got {value_repr(value)}")
    minimized = obj.get("minimized", True)
    if not isinstance(minimized, bool):
        raise ConvcheckError(
            f"{where}: minimized must be true or false, got {value_repr(minimized)}"
        )
    try:
        case = registry.case_from_json(obj["case"], op)
    except InvalidCase as e:
        field = str(e) if str(e).startswith("case") else f"case.{e}"
        raise ConvcheckError(f"{where}: {field}") from None
    return Entry(
        name=name,
        kind=kind,
        signature=signature,
        revision=obj["revision"],
        target=target,
        case=case,
        explanation=explanation,
        path=path,
        also=tuple(tuple(s) for s in also),
        minimized=minimized,
    )


# An outcome's category, as signatures before root-cause signatures held them.
_OLD_CATEGORY = re.compile(r"accept|hang|reject \S+|crash .+")


def _migrated(kind: str, signature: tuple[str, ...], obj: dict, where: str):
    """An entry's (kind, signature) in today's terms. Entries written before signatures
    were root causes keep loading: an infidelity keyed on two outcomes ("reject X",
    "accept") is keyed where they part, or becomes the crash it was; a crash keyed on a C
    function's first word is keyed on its folded family (from the stored site)."""
    revision = obj["revision"]
    if kind == "infidelity" and len(signature) == 3:
        if all(_OLD_CATEGORY.fullmatch(part) for part in signature[1:]):
            predicted, actual = (_old_outcome(part) for part in signature[1:])
            where_parted = parting(predicted, actual, revision)
            if where_parted is not None:
                return kind, (kind, *where_parted)
            return _migrated_crash(signature, obj, where, None)
    if kind == "crash" and len(signature) == 3:
        old_site = Outcome.crashed(signature[1], signature[2])
        if point(old_site, revision) is None and signature[1] != "hang":
            folded = (kind, signature[1], function_family(signature[2]))
            return _migrated_crash(signature, obj, where, folded)
    return kind, signature


def _old_outcome(category: str) -> Outcome:
    verdict, _, rest = category.partition(" ")
    if verdict == "reject":
        return Outcome.reject(rest)
    if verdict == "crash":
        return Outcome.crashed(rest)
    return Outcome.hung() if verdict == "hang" else Outcome.accept(())


def _migrated_crash(signature: tuple[str, ...], obj: dict, where: str, folded):
    """The crash finding of an old entry, from the kernel's crash its outcomes stored, or
    ``folded`` when they hold none."""
    outcomes = obj.get("outcomes")
    for judge in ("native_run", "native"):
        stored = outcomes.get(judge) if isinstance(outcomes, dict) else None
        crash = stored.get("crash") if isinstance(stored, dict) else None
        if isinstance(crash, dict) and isinstance(crash.get("kind"), str):
            site = crash.get("site") if isinstance(crash.get("site"), str) else ""
            return "crash", ("crash", crash["kind"], crash_site_family(site))
    if folded is not None:
        return "crash", folded
    raise ConvcheckError(
        f"{where}: signature {' | '.join(signature)!r} is of an older convcheck and names a "
        "crash, but outcomes.native has none to key it on: judge the case again "
        "(convcheck judge) and save it anew"
    )


def _check_outcomes(outcomes: Any, where: str) -> None:
    """Every judge's stored outcome, as ``Outcome.to_json`` writes it: read back by the
    migration of old entries and by ``export``, so a wrong type is refused here."""
    if not isinstance(outcomes, dict):
        raise ConvcheckError(
            f"{where}: outcomes must be an object of judges' outcomes, got {value_repr(outcomes)}"
        )
    for judge, outcome in outcomes.items():
        field = f"{where}: outcomes.{judge}"
        if not isinstance(outcome, dict):
            raise ConvcheckError(f"{field} must be an object, got {value_repr(outcome)}")
        verdict = outcome.get("verdict")
        if verdict not in tuple(Verdict):
            known = ", ".join(Verdict)
            raise ConvcheckError(
                f"{field}.verdict {value_repr(verdict)} is unknown (known: {known})"
            )
        check = outcome.get("check")
        if check is not None and not _is_text(check):
            raise ConvcheckError(f"{field}.check must be text or null, got {value_repr(check)}")
        sizes = outcome.get("out_sizes")
        if sizes is not None and not (
            isinstance(sizes, list) and all(type(n) is int for n in sizes)
        ):
            raise ConvcheckError(
                f"{field}.out_sizes must be a list of integers or null, got {value_repr(sizes)}"
            )
        crash = outcome.get("crash")
        if crash is not None and not isinstance(crash, dict):
            raise ConvcheckError(
                f"{field}.crash must be an object or null, got {value_repr(crash)}"
            )
        for part in ("kind", "site"):
            value = (crash or {}).get(part)
            if value is not None and not _is_text(value):
                raise ConvcheckError(
                    f"{field}.crash.{part} must be text or null, got {value_repr(value)}"
                )


def load_all(directory: Path, torch_dir: Path | None = None, op: str | None = None) -> list[Entry]:
    """The entries of a corpus folder, then those of its torch folder (``torch_dir``,
    default ``directory/torch``) when that exists; with ``op``, that op's alone (one
    folder holds every op's, and another op's call is not this op's kernel's to judge).
    Every entry is read, whatever its op: a malformed one is an error all the same."""
    entries = _load_listed(directory, "corpus folder")
    torch_dir = torch_folder(directory, torch_dir)
    if torch_dir.is_dir() and torch_dir.resolve() != directory.resolve():
        entries += _load_listed(torch_dir, "torch folder")
    return entries if op is None else [e for e in entries if type(e.case).OP == op]


def _load_listed(directory: Path, what: str) -> list[Entry]:
    """The entries of a folder; one removed after the listing (a minimising campaign
    merges entries into one and removes the others) is no longer part of it."""
    entries = []
    for name in files.json_names(directory, what):
        try:
            entries.append(load(directory / name))
        except files.Vanished:
            continue
    return entries


def torch_folder(directory: Path, torch_dir: Path | None = None) -> Path:
    """Where torch's own bugs go: ``torch_dir`` if given, else the corpus's torch folder."""
    return directory / TORCH_FOLDER if torch_dir is None else torch_dir


def _is_text(value: Any) -> bool:
    """A string that can be printed: a lone surrogate (valid in JSON) cannot."""
    if not isinstance(value, str):
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
