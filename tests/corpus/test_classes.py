"""The shipped corpus guards every known bug class, and is a fixed point of merge: merging
it with itself finds exactly the signatures it holds (a step added to the model can make an
entry show a second signature that no entry holds: then nothing replays it)."""

import shutil
from pathlib import Path

import pytest

from convcheck import corpus
from convcheck.judges import Judges
from convcheck.merge import merge
from convcheck.ops.convolution.known_bugs import LEGACY_BUG_CLASSES, bug_class

pytest.importorskip("torch")

CORPUS = Path(__file__).parents[2] / "corpus"


def test_every_known_class_has_an_entry():
    held = {bug_class(e.signature) for e in corpus.load_all(CORPUS) if e.revision == "legacy"}
    assert set(LEGACY_BUG_CLASSES) - held == set()


def test_merging_the_corpus_with_itself_gives_its_own_signatures(tmp_path):
    copy = tmp_path / "corpus"
    shutil.copytree(CORPUS, copy)
    own = set().union(*(e.keys for e in corpus.load_all(copy)))
    with Judges("legacy", jobs=1) as judges:
        merged = merge(judges, copy, [copy], {"found_by": "test"})
    assert (merged.new, merged.changed, merged.vanished) == ([], [], [])
    assert set(merged.best) == own
