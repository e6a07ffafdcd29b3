"""Corpus files: atomic, named by signature, and loud about malformed input."""

import errno
import json
import os

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
