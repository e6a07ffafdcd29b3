"""Corpus files: atomic, named by signature, and loud about malformed input."""

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


def test_a_failed_write_leaves_the_old_file(tmp_path, monkeypatch):
    path = corpus.write(tmp_path, finding(), "legacy", None, {})
    before = path.read_text()

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError):
        corpus.write(tmp_path, finding(case=conv(groups=0, bias=None)), "legacy", None, {})
    assert path.read_text() == before
    assert [p.name for p in tmp_path.iterdir()] == [path.name]


@pytest.mark.parametrize(
    "text, message",
    [
        ("{", "not JSON"),
        ("[]", "expected a JSON object"),
        ('{"kind": "crash", "signature": [], "revision": "legacy"}', "field 'case' is missing"),
        (
            '{"kind": "nonsense", "signature": [], "revision": "legacy", "case": {}}',
            "kind 'nonsense' is unknown",
        ),
        (
            '{"kind": "crash", "signature": "x", "revision": "legacy", "case": {}}',
            "signature must be a list",
        ),
        (
            '{"kind": "crash", "signature": [], "revision": "legacy", "case": {"input": 1}}',
            "case.input",
        ),
    ],
)
def test_malformed_entry_is_one_clear_error(tmp_path, text, message):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(ConvcheckError) as info:
        corpus.load(path)
    assert message in str(info.value) and str(path) in str(info.value)


def test_missing_corpus_folder(tmp_path):
    with pytest.raises(ConvcheckError, match="does not exist"):
        corpus.load_all(tmp_path / "nope")
