"""`convcheck merge`: corpora of shards, machines and fuzzers brought into one."""

import hashlib
import io
import json
from pathlib import Path

import pytest

from convcheck.campaign import Budget, Campaign
from convcheck.cli import main
from convcheck.commands import example_paths
from convcheck.engines.random import BATCH
from convcheck.generate import RandomSource
from convcheck.judges import Judges
from convcheck.merge import read_folder
from convcheck.ops.convolution.generate import build_case

ROOT = Path(__file__).parents[2]


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], out, err)
    return code, out.getvalue(), err.getvalue()


def keys(folder):
    """The signatures of a corpus folder's entries, subfolders included (torch/)."""
    inputs, _ = read_folder(Path(folder), "legacy", None)
    return sorted(i.entry.key for i in inputs if i.entry is not None)


def campaign_over(judges, folder, cases):
    """A campaign that judges exactly ``cases``, in the random engine's batches."""
    run_ = Campaign(judges, folder, {"found_by": "test"}, budget=Budget(cases=len(cases)))
    for start in range(0, len(cases), BATCH):
        run_.submit(cases[start : start + BATCH])
    return run_


@pytest.mark.slow
def test_two_shards_merged_equal_one_campaign_on_the_same_cases(tmp_path):
    # The engines cannot split one case stream between campaigns (`--seed` gives each its
    # own stream), so the shards are cut here: the random engine's stream for seed 5,
    # judged whole by one campaign and in two halves by two others, as two machines would.
    source = RandomSource(5)
    cases = [build_case(source) for _ in range(768)]
    with Judges("legacy", jobs=2) as judges:
        whole = campaign_over(judges, tmp_path / "whole", cases)
        campaign_over(judges, tmp_path / "a", cases[:384])
        campaign_over(judges, tmp_path / "b", cases[384:])
    assert len(whole.found) > 5, "a campaign that finds little compares nothing"
    code, out, err = run("merge", tmp_path / "out", tmp_path / "a", tmp_path / "b", "--jobs", 2)
    assert code == 1, err
    assert keys(tmp_path / "out") == keys(tmp_path / "whole") == sorted(whole.found)
    assert f"{len(whole.found)} signatures, {len(whole.found)} new" in out
    # Re-judged here, every shard entry still shows the signature it recorded.
    assert "0 changed, 0 vanished" in out


@pytest.fixture(scope="module")
def merged(tmp_path_factory):
    """Three examples (bare cases) merged into an empty corpus, torch left out."""
    out = tmp_path_factory.mktemp("merged")
    examples = tmp_path_factory.mktemp("examples")
    for path in example_paths():
        if path.stem in ("groups_zero", "huge_padding", "bias_wrong_length"):
            (examples / path.name).write_bytes(path.read_bytes())
    code, text, err = run("merge", out, examples, "--no-torch")
    assert code == 1, err
    return out, examples, text


def test_merging_bare_cases_writes_one_entry_per_signature(merged):
    out, _, text = merged
    found = keys(out)
    assert found and len(found) == len(set(found))
    assert "crash | division-by-zero | groups.weight0_rem" in found
    assert f"{len(found)} new" in text


def test_merging_again_changes_nothing(merged, tmp_path):
    out, examples, _ = merged
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    code, text, _ = run("merge", out, examples, "--no-torch")
    assert code == 0
    assert "0 new, 0 changed, 0 vanished" in text
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_a_raw_fuzzer_corpus_is_decoded_and_other_files_skipped(tmp_path):
    pytest.importorskip("atheris")
    raw = tmp_path / "cflite"
    raw.mkdir()
    groups_zero = next(p for p in example_paths() if p.stem == "groups_zero").read_bytes()
    # libFuzzer names an input by its SHA-1, without a suffix.
    (raw / hashlib.sha1(groups_zero).hexdigest()).write_bytes(groups_zero)
    (raw / "junit.xml").write_text("<testsuites/>")
    code, text, err = run("merge", tmp_path / "out", raw, "--no-torch")
    assert code == 1, err
    assert "crash | division-by-zero | groups.weight0_rem" in keys(tmp_path / "out")
    assert "1 inputs re-judged, 1 files skipped" in text


def write_entry(folder, name, signature, case_path):
    folder.mkdir(exist_ok=True)
    data = {
        "format": 1,
        "kind": signature[0],
        "signature": list(signature),
        "revision": "legacy",
        "case": json.loads(Path(case_path).read_text()),
    }
    (folder / f"{name}.json").write_text(json.dumps(data))


def test_changed_and_vanished_entries_are_reported_and_pruned_on_request(tmp_path):
    example = {p.stem: p for p in example_paths()}
    out = tmp_path / "out"
    write_entry(out, "renamed", ("overflow", "an.old_site"), example["groups_zero"])
    write_entry(out, "fixed", ("crash", "SEGV", "gone"), example["conv3d"])
    code, text, _ = run("merge", out, tmp_path / "out", "--no-torch")
    assert code == 1
    assert "changed   overflow | an.old_site -> " in text
    assert "vanished  crash | SEGV | gone" in text
    assert (out / "renamed.json").exists() and (out / "fixed.json").exists()
    code, text, _ = run("merge", out, tmp_path / "out", "--no-torch", "--prune")
    assert not (out / "renamed.json").exists() and not (out / "fixed.json").exists()
    assert "crash | division-by-zero | groups.weight0_rem" in keys(out)


def bad_inputs(tmp_path):
    entry = json.loads(next((ROOT / "corpus").glob("crash-*.json")).read_text())
    yield "missing", tmp_path / "nowhere", "does not exist"
    current = tmp_path / "current"
    current.mkdir()
    (current / "e.json").write_text(json.dumps({**entry, "revision": "current"}))
    yield "other revision", current, "recorded for revision current"
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "e.json").write_text('{"format": 1, "case": ')
    yield "not JSON", broken, "not JSON"
    bad_case = tmp_path / "bad-case"
    bad_case.mkdir()
    (bad_case / "seed.case").write_text('{"input": 7}')
    yield "bad case", bad_case, "seed.case"


def test_malformed_inputs_are_one_line_and_exit_2(tmp_path):
    for what, folder, message in bad_inputs(tmp_path):
        code, out, err = run("merge", tmp_path / "out", folder, "--no-torch")
        assert code == 2, what
        assert err.count("\n") == 1 and message in err and "Traceback" not in err, (what, err)
        assert not list((tmp_path / "out").glob("*.json")), what
