"""Every corpus entry, replayed by name with its own op's judges: on its own revision it
must still show its signature; on current it must be handled cleanly. torch's own bugs
(corpus/torch/) are torch's: one that a newer torch fixed is skipped, never the kernel's
failure."""

from pathlib import Path

import pytest

from convcheck import corpus
from convcheck.judges import Judges

torch = pytest.importorskip("torch")

CORPUS = Path(__file__).parents[2] / "corpus"
ENTRIES = corpus.load_all(CORPUS) if CORPUS.is_dir() else []


@pytest.fixture(scope="module")
def engines():
    made = {}

    def judges(op, revision):
        if (op, revision) not in made:
            made[op, revision] = Judges(revision, op=op, jobs=1)
        return made[op, revision]

    yield judges
    for engine in made.values():
        engine.close()


def test_the_corpus_is_not_empty():
    assert ENTRIES, f"no entries in {CORPUS}"


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.name for e in ENTRIES])
def test_reproduces_on_its_revision(entry, engines):
    found = engines(entry.case.OP, entry.revision).evaluate([entry.case])[0]
    keys = {f.key for f in found}
    if entry.kind == "torch-bug" and entry.key not in keys:
        pytest.skip(f"torch {torch.__version__} no longer has this bug of its own")
    assert entry.key in keys, [f.describe() for f in found]


def test_torch_bugs_are_apart():
    """The kernel's folder holds the kernel's findings; torch's bugs are in corpus/torch/."""
    for entry in ENTRIES:
        in_torch_folder = entry.path.parent.name == corpus.TORCH_FOLDER
        assert in_torch_folder == (entry.kind == "torch-bug"), entry.path


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.name for e in ENTRIES])
def test_handled_cleanly_on_current(entry, engines):
    found = engines(entry.case.OP, "current").evaluate([entry.case])[0]
    assert [f.describe() for f in found if f.about_kernel] == []
