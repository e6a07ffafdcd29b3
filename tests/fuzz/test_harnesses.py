"""Every atheris harness's TestOneInput runs over the seed corpus, so none can rot."""

import importlib.util
import os
from pathlib import Path

import pytest

from convcheck import corpus, model
from convcheck.fuzzed import case_from_bytes, dictionary
from convcheck.native import NativeJudge

pytest.importorskip("atheris")

ROOT = Path(__file__).parents[2]
SEEDS = (
    [e.case.dumps().encode() for e in corpus.load_all(ROOT / "corpus")]
    if (ROOT / "corpus").is_dir()
    else []
)
RANDOM_BYTES = [os.urandom(n) for n in (0, 1, 7, 64, 256, 1024) for _ in range(5)]


def load_harness(name):
    spec = importlib.util.spec_from_file_location(f"harness_{name}", ROOT / "fuzz" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_dictionary_file_is_the_generated_one():
    assert (ROOT / "fuzz" / "convcheck.dict").read_text() == dictionary()


def test_bytes_always_decode_to_a_case():
    for data in RANDOM_BYTES + SEEDS + [b"{not json", b'{"input": 1}']:
        case_from_bytes(data)


def test_json_seeds_decode_to_themselves():
    for data in SEEDS:
        assert case_from_bytes(data).dumps().encode() == data


def test_legacy_harness_fails_exactly_on_overflows_and_orderings():
    harness = load_harness("legacy_overflows")
    for data in SEEDS + RANDOM_BYTES:
        expected = bool(model.classify(case_from_bytes(data), "legacy")[2])
        try:
            harness.TestOneInput(data)
            raised = False
        except RuntimeError as e:
            raised = True
            assert "case:" in str(e)
        assert raised == expected


def test_current_harness_passes_the_whole_corpus():
    harness = load_harness("current_vs_kernel")
    with NativeJudge("current") as judge:
        harness.KERNEL = judge
        for data in SEEDS + RANDOM_BYTES:
            harness.TestOneInput(data)
    assert SEEDS, "the corpus seeds the harnesses; it must not be empty"
