"""The corpus: one small JSON file per distinct finding, replayed as a regression test.

A file is written atomically (a temporary file in the same folder, fsync, rename) the
moment a finding is new, and replaced by its minimised form later, under the same name:
the name comes from the signature, so a killed campaign leaves either the old file or the
new one, never half of either.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from convcheck.case import Case
from convcheck.errors import ConvcheckError, InvalidCase
from convcheck.findings import Finding, FindingKind

FORMAT_VERSION = 1


@dataclass(frozen=True)
class Entry:
    name: str
    kind: str
    signature: tuple[str, ...]
    revision: str
    target: str | None
    case: Case
    explanation: str
    path: Path | None = None

    @property
    def key(self) -> str:
        return " | ".join(self.signature)


def entry_name(signature: tuple[str, ...]) -> str:
    digest = hashlib.sha1(" | ".join(signature).encode()).hexdigest()[:8]
    words = re.sub(r"[^a-z0-9]+", "-", " ".join(signature[:3]).lower()).strip("-")
    return f"{words[:60].rstrip('-')}-{digest}"


def to_json(finding: Finding, revision: str, target: str | None, meta: dict[str, Any]) -> dict:
    return {
        "format": FORMAT_VERSION,
        "name": entry_name(finding.signature),
        "kind": finding.kind,
        "signature": list(finding.signature),
        "revision": revision,
        "target": target,
        "explanation": finding.explanation,
        "case": finding.case.to_json(),
        "outcomes": {judge: o.to_json() for judge, o in finding.outcomes.items()},
        **meta,
    }


def write(directory: Path, finding: Finding, revision: str, target: str | None, meta: dict) -> Path:
    """Write (or replace) the finding's file atomically; returns its path."""
    directory.mkdir(parents=True, exist_ok=True)
    data = to_json(finding, revision, target, meta)
    path = directory / f"{data['name']}.json"
    text = json.dumps(data, indent=2, sort_keys=True) + "\n"
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=directory)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes it private; a corpus is shared
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    dir_fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    return path


def load(path: Path) -> Entry:
    """One entry; anything malformed is a ConvcheckError naming the file and the field."""
    try:
        data = json.loads(path.read_text())
    except OSError as e:
        raise ConvcheckError(f"corpus file {path}: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise ConvcheckError(f"corpus file {path}: not JSON ({e.msg} at line {e.lineno})") from None
    if not isinstance(data, dict):
        raise ConvcheckError(f"corpus file {path}: expected a JSON object")
    for name in ("kind", "signature", "revision", "case"):
        if name not in data:
            raise ConvcheckError(f"corpus file {path}: field {name!r} is missing")
    if data["kind"] not in set(FindingKind):
        raise ConvcheckError(f"corpus file {path}: kind {data['kind']!r} is unknown")
    signature = data["signature"]
    if not isinstance(signature, list) or not all(isinstance(s, str) for s in signature):
        raise ConvcheckError(f"corpus file {path}: signature must be a list of strings")
    try:
        case = Case.from_json(data["case"])
    except InvalidCase as e:
        raise ConvcheckError(f"corpus file {path}: case.{e}") from None
    return Entry(
        name=data.get("name", path.stem),
        kind=data["kind"],
        signature=tuple(signature),
        revision=data["revision"],
        target=data.get("target"),
        case=case,
        explanation=data.get("explanation", ""),
        path=path,
    )


def load_all(directory: Path) -> list[Entry]:
    if not directory.is_dir():
        raise ConvcheckError(f"corpus folder {directory} does not exist")
    return [load(p) for p in sorted(directory.glob("*.json"))]
