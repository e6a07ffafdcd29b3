"""The shipped corpus guards every known bug class of each op it holds entries of, and is
a fixed point of merge, op by op: merging it with itself finds exactly the signatures it
holds (a step added to the model can make an entry show a second signature that no entry
holds: then nothing replays it)."""

import importlib
import shutil
from pathlib import Path

import pytest

from convcheck import corpus, registry
from convcheck.judges import Judges
from convcheck.merge import merge

pytest.importorskip("torch")

CORPUS = Path(__file__).parents[2] / "corpus"
OPS = ("convolution", "avg_pool2d", "max_pool2d_with_indices")


@pytest.mark.parametrize("op", OPS)
def test_every_known_class_has_an_entry(op):
    classes = importlib.import_module(f"convcheck.ops.{op}.known_bugs").LEGACY_BUG_CLASSES
    held = {
        registry.get(op).bug_class(e.signature)
        for e in corpus.load_all(CORPUS)
        if e.revision == "legacy" and e.case.OP == op
    }
    assert set(classes) - held == set()


@pytest.mark.parametrize("op", OPS)
def test_merging_the_corpus_with_itself_gives_its_own_signatures(op, tmp_path):
    copy = tmp_path / "corpus"
    shutil.copytree(CORPUS, copy)
    own = set().union(*(e.keys for e in corpus.load_all(copy) if e.case.OP == op))
    with Judges("legacy", op=op, jobs=1) as judges:
        merged = merge(judges, copy, [copy], {"found_by": "test"})
    assert (merged.new, merged.changed, merged.vanished) == ([], [], [])
    assert set(merged.best) == own
