"""Every atheris harness's TestOneInput runs over the seed corpus, so none can rot."""

import importlib.util
import os
import random
from pathlib import Path

import pytest

from convcheck import corpus, model
from convcheck.fuzzed import case_from_bytes, dictionary
from convcheck.native import NativeJudge

pytest.importorskip("atheris")

ROOT = Path(__file__).parents[2]
# The harnesses fuzz convolution: its entries are their seeds.
SEEDS = (
    [e.case.dumps().encode() for e in corpus.load_all(ROOT / "corpus", op="convolution")]
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
    nested = b'{"input": ' + b"[" * 10**5
    for data in RANDOM_BYTES + SEEDS + [b"{not json", b'{"input": 1}', nested, b"{\xff"]:
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


def test_a_kernel_crash_fails_the_current_harness_with_the_sanitizer_report():
    harness = load_harness("current_vs_kernel")
    groups_zero = (ROOT / "convcheck" / "examples" / "groups_zero.json").read_bytes()
    # The legacy kernel under the current model: it divides by groups = 0.
    with NativeJudge("legacy") as judge:
        harness.KERNEL = judge
        with pytest.raises(RuntimeError) as failed:
            harness.TestOneInput(groups_zero)
    message = str(failed.value)
    assert "case:   {" in message and "kernel: crash division-by-zero" in message
    assert "runtime error: division by zero" in message and "#0 " in message


def hostile_variants(seeds, count, seed=0):
    """Seeded mutations of real files: cuts, byte flips, and the tokens that once escaped
    the loaders (deep nesting, long integers, lone surrogates, non-UTF-8 bytes)."""
    rng = random.Random(seed)
    tokens = [b"[" * 5000, b"9" * 5000, b'"\\ud800"', b"\xff", b"NaN", b"1e999", b"[]", b"{}"]
    out = []
    for _ in range(count):
        data = bytearray(rng.choice(seeds))
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(data) + 1)
            move = rng.randrange(3)
            if move == 0:
                data[at:] = data[at : at + rng.randrange(len(data) + 1)]
            elif move == 1 and at < len(data):
                data[at] = rng.randrange(256)
            else:
                data[at:at] = rng.choice(tokens)
        out.append(bytes(data))
    return out + [os.urandom(n) for n in (0, 1, 7, 64, 256, 1024) for _ in range(10)]


def test_loader_harness_raises_only_clear_errors():
    harness = load_harness("loaders")
    entries = [p.read_bytes() for p in sorted((ROOT / "corpus").glob("*.json"))]
    for data in hostile_variants(SEEDS + entries, 300) + SEEDS + entries:
        harness.TestOneInput(data)


def test_loader_harness_fails_on_any_other_exception(monkeypatch):
    harness = load_harness("loaders")
    monkeypatch.setattr(harness.Case, "from_json", lambda data, op=None: {}["a dtype"])
    with pytest.raises(RuntimeError, match="KeyError: 'a dtype'"):
        harness.TestOneInput(SEEDS[0])
