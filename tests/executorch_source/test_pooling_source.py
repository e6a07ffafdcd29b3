"""The pooling ops of a user's ExecuTorch checkout as a sanitized target (issue 29).

As for convolution, the tests that build and run a checkout need one: they run when
CONVCHECK_EXECUTORCH_SRC names it (a legacy checkout: main of August 2026) and are
skipped otherwise. The campaigns are seeded and run a case budget.
"""

import importlib
import io
import os
from pathlib import Path

import pytest

from convcheck import corpus, engines, registry
from convcheck.campaign import Budget, Campaign
from convcheck.cli import main
from convcheck.judges import Judges

SOURCE = os.environ.get("CONVCHECK_EXECUTORCH_SRC")
needs_checkout = pytest.mark.skipif(
    not SOURCE, reason="needs an ExecuTorch checkout: set CONVCHECK_EXECUTORCH_SRC to its root"
)
CORPUS = Path(__file__).resolve().parents[2] / "corpus"
OPS = ("avg_pool2d", "max_pool2d_with_indices")


@pytest.mark.parametrize(
    ("op", "said"),
    [
        (
            "avg_pool2d",
            "not an ExecuTorch checkout (missing kernels/portable/cpu/op_avg_pool2d.cpp)",
        ),
        ("constant_pad_nd", "op='constant_pad_nd' has no such target"),
    ],
)
def test_building_a_target_that_cannot_be_is_one_line(tmp_path, op, said):
    out, err = io.StringIO(), io.StringIO()
    code = main(["target", "executorch", "--source", str(tmp_path), "--op", op], out, err)
    assert (code, out.getvalue()) == (2, "")
    assert err.getvalue().count("\n") == 1 and said in err.getvalue()


@needs_checkout
def test_the_target_command_builds_the_pooling_library():
    out, err = io.StringIO(), io.StringIO()
    code = main(
        ["target", "executorch", "--source", SOURCE, "--op", "max_pool2d_with_indices"], out, err
    )
    assert code == 0, err.getvalue()
    library = Path(out.getvalue().strip())
    assert library.is_file() and "pooling" in library.name
    assert (
        f"use it as: --op max_pool2d_with_indices --target executorch-source:{SOURCE}"
        in err.getvalue()
    )


def test_not_a_checkout_is_one_line(tmp_path):
    out, err = io.StringIO(), io.StringIO()
    argv = ["fuzz", "--op", "avg_pool2d", "--target", f"executorch-source:{tmp_path}"]
    code = main([*argv, "--cases", "10", "--corpus", str(tmp_path / "found")], out, err)
    assert code == 2
    said = err.getvalue()
    assert said.count("\n") == 1
    assert "not an ExecuTorch checkout (missing kernels/portable/cpu/op_avg_pool2d.cpp)" in said


@pytest.fixture(scope="module", params=OPS)
def judges(request):
    with Judges("legacy", target=f"executorch-source:{SOURCE}", jobs=2, op=request.param) as j:
        yield j


@needs_checkout
def test_every_corpus_entry_of_the_op_is_answered_as_the_model_predicts(judges):
    """The minimised entries, one per class: the real kernel answers each as the legacy
    model predicts (the target is not where any of them parts)."""
    entries = [e for e in corpus.load_all(CORPUS, op=judges.op) if e.revision == "legacy"]
    assert entries
    judgements = judges.judge([e.case for e in entries])
    for entry, judgement in zip(entries, judgements, strict=True):
        parted = [f.describe() for f in judges.findings(judgement) if f.kind == "infidelity"]
        assert parted == [], entry.name


@needs_checkout
def test_a_seeded_campaign_finds_every_class_and_agrees_with_the_model(judges):
    run = Campaign(judges, budget=Budget(cases=4096))
    run.explore(engines.load("random"), 1)
    found = list(run.found.values())
    infidelities = [f.describe() for f in found if f.kind == "infidelity"]
    assert infidelities == []
    op = registry.get(judges.op)
    labels = {op.bug_class(f.signature) for f in found if f.about_kernel}
    known = importlib.import_module(f"convcheck.ops.{judges.op}.known_bugs")
    assert set(known.LEGACY_BUG_CLASSES) <= labels, sorted(set(known.LEGACY_BUG_CLASSES) - labels)
