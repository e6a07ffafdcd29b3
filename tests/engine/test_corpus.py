"""Corpus files: atomic, named by signature, and loud about malformed input."""

import dataclasses
import errno
import json
import os
from pathlib import Path

import pytest
from builders import conv

from convcheck import corpus
from convcheck.errors import ConvcheckError
from convcheck.findings import Finding
from convcheck.outcome import Outcome


def finding(case=None, signature=("crash", "division-by-zero", "groups.weight0_rem")):
    outcomes = {"native": Outcome.crashed("division-by-zero", "step_groups checks_legacy.c:90")}
    return Finding(signature[0], signature, case or conv(groups=0), outcomes, "native crash")


def test_round_trip_and_replacement_under_the_same_name(tmp_path):
    path = corpus.write(tmp_path, finding(), "legacy", None, {"torch_version": "2.13.0"})
    entry = corpus.load(path)
    assert entry.case == conv(groups=0)
    assert entry.signature == ("crash", "division-by-zero", "groups.weight0_rem")
    smaller = finding(case=conv(groups=0, bias=None))
    assert corpus.write(tmp_path, smaller, "legacy", None, {}) == path
    assert corpus.load(path).case.bias is None
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary left behind
    data = json.loads(path.read_text())
    assert data["outcomes"]["native"]["crash"]["kind"] == "division-by-zero"
    assert list(data) == sorted(data)  # sorted and indented, for people and diffs


def test_distinct_signatures_get_distinct_files(tmp_path):
    a = corpus.write(tmp_path, finding(), "legacy", None, {})
    b = corpus.write(
        tmp_path, finding(signature=("overflow", "output_sizes.dim*.narrow")), "legacy", None, {}
    )
    assert a != b and len(corpus.load_all(tmp_path)) == 2


@pytest.mark.parametrize("step", ["fsync", "replace"])
def test_a_failed_write_leaves_the_old_file(tmp_path, monkeypatch, step):
    path = corpus.write(tmp_path, finding(), "legacy", None, {})
    before = path.read_text()

    def broken(*args):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, step, broken)
    with pytest.raises(ConvcheckError) as info:
        corpus.write(tmp_path, finding(case=conv(groups=0, bias=None)), "legacy", None, {})
    assert str(info.value) == (
        f"corpus folder {tmp_path}: cannot write {path.name}: No space left on device"
    )
    assert path.read_text() == before
    assert [p.name for p in tmp_path.iterdir()] == [path.name]


def test_a_corpus_folder_that_is_a_file(tmp_path):
    (tmp_path / "corpus").write_text("")
    with pytest.raises(ConvcheckError, match="corpus folder .*/corpus: not a folder"):
        corpus.write(tmp_path / "corpus", finding(), "legacy", None, {})
    with pytest.raises(ConvcheckError, match="corpus folder .*/corpus is not a folder"):
        corpus.load_all(tmp_path / "corpus")


def test_hidden_files_are_not_entries(tmp_path):
    """A concurrent writer's temporary is half a file: the loader never opens it."""
    path = corpus.write(tmp_path, finding(), "legacy", None, {})
    (tmp_path / ".tmp-abc123.json").write_text(path.read_text()[:50])
    (tmp_path / "notes.txt").write_text("not an entry")
    assert [e.path for e in corpus.load_all(tmp_path)] == [path]


def test_an_entry_is_parsed_from_bytes_as_written(tmp_path):
    path = corpus.write(tmp_path, finding(), "legacy", None, {})
    assert corpus.parse(path.read_bytes(), path) == corpus.load(path)


ENTRY = '{"format": 1, "kind": "crash", "signature": ["crash"], "revision": "legacy", "case": {}}'


@pytest.mark.parametrize(
    "text, message",
    [
        ("{", "not JSON"),
        ("[]", "expected a JSON object"),
        (ENTRY.replace(', "case": {}', ""), "field 'case' is missing"),
        (ENTRY.replace('"crash"', '"nonsense"'), "kind 'nonsense' is unknown"),
        (ENTRY.replace('["crash"]', '"x"'), "signature must be a list of strings, got 'x'"),
        (ENTRY.replace('["crash"]', "[]"), "signature must be a list of strings, got []"),
        (ENTRY.replace('"format": 1', '"format": 2'), "format 2 is unknown"),
        (ENTRY.replace('"format": 1', '"format": true'), "format True is unknown"),
        (ENTRY.replace('"legacy"', '"nightly"'), "revision 'nightly' is unknown"),
        (ENTRY.replace('"case": {}', '"case": {"input": 1}'), "case.input"),
        (ENTRY[:-1] + ', "name": "../x"}', "name '../x' is not a plain file name"),
        (ENTRY[:-1] + ', "target": ""}', "target must be a library's path or null"),
        (ENTRY[:-1] + ', "op": "conv9d"}', "op 'conv9d' is unknown (known: convolution"),
        (ENTRY[:-1] + ', "op": 7}', "op 7 is unknown"),
        (b'{"a": "\xff"}', "not UTF-8 (byte 0xff at offset 7)"),
    ],
)
def test_malformed_entry_is_one_clear_error(tmp_path, text, message):
    path = tmp_path / "bad.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(ConvcheckError) as info:
        corpus.load(path)
    assert message in str(info.value) and str(path) in str(info.value)


def test_missing_corpus_folder(tmp_path):
    with pytest.raises(ConvcheckError, match="does not exist"):
        corpus.load_all(tmp_path / "nope")


def old_entry(tmp_path, kind, signature, outcomes=None, revision="current"):
    """A file as an older convcheck wrote it, before signatures were root causes."""
    data = json.loads(corpus.write(tmp_path, finding(), revision, None, {}).read_text())
    data.update(kind=kind, signature=list(signature), revision=revision)
    if outcomes is not None:
        data["outcomes"] = outcomes
    path = tmp_path / "old.json"
    path.write_text(json.dumps(data))
    return path


CRASHED_RUN = {
    "native": {"verdict": "accept", "check": None, "out_sizes": [1, 4, 3], "crash": None},
    "native_run": {
        "verdict": "crash",
        "check": None,
        "out_sizes": None,
        "crash": {"kind": "heap-buffer-overflow READ", "site": "load_bfloat16 conv_loops.c:160"},
    },
}

MIGRATIONS = [
    (
        "the kernel passes the model's check",
        ("infidelity", "reject groups.gt_weight0", "reject bias.length"),
        None,
        ("infidelity", "groups.gt_weight0", "kernel passes"),
    ),
    (
        "the kernel rejects earlier",
        ("infidelity", "accept", "reject rank.input"),
        None,
        ("infidelity", "rank.input", "kernel rejects"),
    ),
    (
        "both accept",
        ("infidelity", "accept", "accept"),
        None,
        ("infidelity", "output_sizes", "sizes differ"),
    ),
    (
        "an infidelity of a crashing kernel is its crash",
        ("infidelity", "accept", "crash heap-buffer-overflow READ"),
        CRASHED_RUN,
        ("crash", "heap-buffer-overflow READ", "load"),
    ),
    (
        "a crash keyed on one per-dtype loader",
        ("crash", "heap-buffer-overflow READ", "load_float32"),
        CRASHED_RUN,
        ("crash", "heap-buffer-overflow READ", "load"),
    ),
    (
        "a crash keyed on the model's site stays",
        ("crash", "division-by-zero", "groups.weight0_rem"),
        None,
        ("crash", "division-by-zero", "groups.weight0_rem"),
    ),
]


@pytest.mark.parametrize(
    "old, outcomes, new", [row[1:] for row in MIGRATIONS], ids=[row[0] for row in MIGRATIONS]
)
def test_an_old_signature_loads_as_todays(tmp_path, old, outcomes, new):
    entry = corpus.load(old_entry(tmp_path, old[0], old, outcomes))
    assert (entry.kind, entry.signature) == (new[0], new)


def test_an_old_signature_that_cannot_be_migrated_is_one_clear_error(tmp_path):
    path = old_entry(tmp_path, "infidelity", ("infidelity", "accept", "hang"), outcomes={})
    with pytest.raises(ConvcheckError) as info:
        corpus.load(path)
    assert str(info.value).startswith(f"corpus file {path}: signature 'infidelity | accept | hang'")


def test_the_shipped_entries_are_in_todays_terms():
    """Loading migrates; the shipped files need none (they are written in today's terms)."""
    shipped = Path(__file__).parents[2] / "corpus"
    for path in sorted(shipped.glob("*.json")):
        data = json.loads(path.read_text())
        entry = corpus.load(path)
        assert (entry.kind, list(entry.signature)) == (data["kind"], data["signature"]), path
        assert entry.name == corpus.entry_name(entry.signature, type(entry.case).OP), path


def test_merged_signatures_round_trip(tmp_path):
    merged = finding(signature=("infidelity", "bias.length", "kernel passes"))
    kept = dataclasses.replace(finding(), also=(merged.signature,))
    entry = corpus.load(corpus.write(tmp_path, kept, "legacy", None, {}))
    assert entry.also == (merged.signature,)
    assert entry.keys == {entry.key, "infidelity | bias.length | kernel passes"}


def test_findings_minimised_to_one_call_merge_into_one_entry(tmp_path):
    from types import SimpleNamespace

    from convcheck.campaign import Campaign

    judges = SimpleNamespace(revision="legacy", target=None, stopped=False)
    run = Campaign(judges, tmp_path)
    crash = finding()
    passes = finding(signature=("infidelity", "groups.gt_weight0", "kernel passes"))
    elsewhere = finding(conv(groups=0, bias=None), ("infidelity", "bias.length", "kernel passes"))
    torch_bug = finding(signature=("torch-bug", "crash SIGSEGV"))
    for f in (passes, crash, elsewhere, torch_bug):  # as found, each written at once
        run._keep(f, 0.0)
        run.minimized.add(f.key)
    run.minimize_all()
    assert sorted(run.found) == sorted([crash.key, elsewhere.key, torch_bug.key])
    assert run.found[crash.key].also == (passes.signature,)
    entries = {e.key: e for e in corpus.load_all(tmp_path)}
    assert sorted(entries) == sorted(run.found)  # the merged one's file is gone
    assert entries[crash.key].keys == {crash.key, passes.key}
