"""A foreign target: our own `current` kernel with every check id renamed (`rank.input`
becomes `MK_RANK_INPUT`), built sanitized from a patched copy of the sources. Its ids differ
from ours only in names, so a seeded campaign finds infidelities without a map, lists the
unknown ids once with their cases, and finds none with the map written from that list, or
with ``--compare verdict``."""

import io
import json
import re
from pathlib import Path

import pytest
from builders import conv

from convcheck.check_ids import CHECK_IDS, IdReader, load_map
from convcheck.cli import main
from convcheck.native.build import compile_shared
from convcheck.ops.convolution.native import KERNEL
from convcheck.outcome import Outcome

ACCEPTED = Outcome.accept((1, 4, 3))
# The same campaign anywhere: a case budget and a seed, no torch (model against kernel).
CAMPAIGN = ("--revision", "current", "--no-torch", "--no-minimize", "--cases", 800, "--seed", 5)


def foreign(check: str) -> str:
    return "MK_" + re.sub(r"\W", "_", check).upper()


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def target(tmp_path_factory) -> str:
    """Our current kernel's sources with each check id's string literal renamed."""
    folder = tmp_path_factory.mktemp("foreign")
    names = [*KERNEL.sources["current"], *KERNEL.headers]
    renamed = 0
    for name in names:
        text = (KERNEL.directory / name).read_text()
        text, n = re.subn(
            r'"([a-z_0-9]+\.[a-z_0-9]+)"',
            lambda m: f'"{foreign(m[1])}"' if m[1] in CHECK_IDS else m[0],
            text,
        )
        renamed += n
        (folder / name).write_text(text)
    assert renamed >= 30  # the patch reached the checks
    sources = [folder / name for name in names if name.endswith(".c")]
    return str(compile_shared(sources, "foreign-current", sanitized=True))


def infidelities(corpus: Path) -> list[dict]:
    entries = [json.loads(p.read_text()) for p in corpus.glob("*.json")]
    return [e for e in entries if e["kind"] == "infidelity"]


def unknown_ids(report: str) -> dict[str, int]:
    return {m[1]: int(m[2]) for m in re.finditer(r"^  '(\S+)': (\d+) cases \(", report, re.M)}


def suggested_map(report: str) -> dict[str, str]:
    (line,) = re.findall(r"^a map from the model's readings \(one id each\): (.*)$", report, re.M)
    return json.loads(line)


@pytest.fixture(scope="module")
def without_map(target, tmp_path_factory):
    corpus = tmp_path_factory.mktemp("without-map")
    code, out, err = run("fuzz", "--target", target, *CAMPAIGN, "--corpus", corpus)
    return code, out, corpus


def test_without_a_map_the_names_are_infidelities_and_listed_once(without_map):
    code, out, corpus = without_map
    assert code == 1
    found = infidelities(corpus)
    assert found
    listed = unknown_ids(out)
    assert listed and all(check.startswith("MK_") for check in listed)
    assert out.count("are not convcheck's") == 1
    # Every infidelity is a rejection under a name the list holds.
    for entry in found:
        assert entry["outcomes"]["native"]["check"] in listed, entry["explanation"]


def test_the_map_written_from_the_list_leaves_no_infidelity(without_map, target, tmp_path):
    _, out, _ = without_map
    inverse = {foreign(check): check for check in CHECK_IDS}
    mapping = suggested_map(out)
    assert mapping == {check: inverse[check] for check in unknown_ids(out)}
    (tmp_path / "map.json").write_text(json.dumps(mapping))
    corpus = tmp_path / "corpus"
    code, out, err = run(
        "fuzz",
        "--target",
        target,
        *CAMPAIGN,
        "--corpus",
        corpus,
        "--check-map",
        tmp_path / "map.json",
    )
    assert infidelities(corpus) == [], out
    assert "are not convcheck's" not in out
    assert code == 0, out


def test_compare_verdict_leaves_no_infidelity(target, tmp_path):
    code, out, err = run(
        "fuzz", "--target", target, *CAMPAIGN, "--corpus", tmp_path, "--compare", "verdict"
    )
    assert infidelities(tmp_path) == [], out
    assert code == 0, out


def test_a_map_reads_exact_ids_then_patterns_in_order(tmp_path):
    path = tmp_path / "map.json"
    path.write_text(
        json.dumps(
            {"E_(PAD|STRIDE)": "padding.range", "E_STRIDE": "stride.range", "E_.*": "rank.input"}
        )
    )
    reader = IdReader(load_map(path))
    case = conv()
    for theirs, ours in [
        ("E_STRIDE", "stride.range"),
        ("E_PAD", "padding.range"),
        ("E_X", "rank.input"),
    ]:
        read = reader.read(Outcome.reject(theirs), Outcome.reject("x.y"), case)
        assert (read.check, read.detail) == (ours, f"the target's {theirs}")
    # Unmapped: kept as the target said it, and counted with what the model says.
    assert reader.read(Outcome.reject("e_x"), Outcome.reject("rank.input"), case).check == "e_x"
    assert reader.unknown["e_x"].model_says == {"rank.input": 1}


def test_compare_verdict_ignores_every_id():
    reader = IdReader(compare="verdict")
    model_says = Outcome.reject("rank.input")
    for theirs in ("rank.weight", "E_RANK"):
        assert reader.read(Outcome.reject(theirs), model_says, conv()).check == "rank.input"
    # Only the verdict and sizes count: an accept is never read as a rejection.
    assert reader.read(Outcome.reject("E_RANK"), ACCEPTED, conv()).check == "E_RANK"
    assert reader.read(ACCEPTED, model_says, conv()) == ACCEPTED
    assert list(reader.unknown) == ["E_RANK"]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("{", "check map"),
        ("[]", "expected a JSON object"),
        ("{}", "expected a JSON object"),
        ('{"E_RANK": "rank.inptu"}', "'E_RANK' maps to 'rank.inptu', which is not a check id"),
        ('{"E_RANK": 3}', "which is not a check id"),
        ('{"E_(RANK": "rank.input"}', "'E_(RANK' is not a regular expression"),
    ],
)
def test_a_malformed_map_is_one_line_and_exit_2(tmp_path, text, says):
    path = tmp_path / "map.json"
    path.write_text(text)
    code, out, err = run("judge", "x.json", "--target", "lib.so", "--check-map", path)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and says in err, err


def test_a_map_needs_a_target(tmp_path):
    code, _, err = run("replay", tmp_path, "--compare", "verdict")
    assert code == 2 and "--target" in err
