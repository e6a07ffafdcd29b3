"""``prove``'s SARIF and JUnit, and ``ci`` failing on a site of ``current`` not proven."""

import importlib
import io
import json
import xml.etree.ElementTree as ET

import pytest

pytest.importorskip("z3")

from convcheck import ci  # noqa: E402
from convcheck.cli import main  # noqa: E402
from convcheck.judges import Judges  # noqa: E402
from convcheck.ops.convolution.native import KERNEL  # noqa: E402
from convcheck.ops.convolution.solving import ConvolutionShape as Shape  # noqa: E402
from convcheck.solver import formats, judge_witnesses, prove  # noqa: E402


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], out, err)
    return code, out.getvalue(), err.getvalue()


def test_prove_writes_a_test_per_site_and_a_sarif_result_per_witness(tmp_path):
    sarif, junit = tmp_path / "prove.sarif", tmp_path / "junit.xml"
    argv = ("prove", "--revision", "current", "--rank", 3, "--no-judge", "--json")
    code, out, err = run(*argv, "--sarif", sarif, "--junit", junit)
    sites = json.loads(out)["sites"]
    assert code == (0 if all(s["status"] == "proven" for s in sites) else 1), err
    suite = ET.parse(junit).getroot()
    names = [case.get("name") for case in suite.iter("testcase")]
    assert names == [f"{s['site']} ({s['kind']})" for s in sites] and names
    statuses = [s["status"] for s in sites]
    assert int(suite.get("failures")) == statuses.count("witness")
    assert int(suite.get("errors")) == statuses.count("unknown")
    results = json.loads(sarif.read_text())["runs"][0]["results"]
    assert len(results) == sum(s["witness"] is not None for s in sites)


def test_prove_reads_the_proof_from_the_cache_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("CONVCHECK_CACHE", str(tmp_path))
    argv = ("prove", "--revision", "current", "--rank", 3, "--no-judge", "--json")
    solved, read, again = (json.loads(run(*argv, *more)[1]) for more in ((), (), ("--no-cache",)))
    assert (solved["cached"], read["cached"], again["cached"]) == (False, True, False)
    assert read["sites"] == solved["sites"] and read["seconds"] == solved["seconds"]
    assert list(tmp_path.glob("solver-prove-current-*.json"))
    code, out, _ = run(*argv[:-1])
    assert code == 0 and "read from the cache (solved in" in out


def test_a_cached_proof_of_another_shape_is_solved_again_and_replaced(tmp_path, monkeypatch):
    monkeypatch.setenv("CONVCHECK_CACHE", str(tmp_path))
    argv = ("prove", "--revision", "current", "--rank", 3, "--no-judge", "--json")
    assert run(*argv)[0] == 0
    (stored,) = tmp_path.glob("solver-prove-current-*.json")
    stored.write_text('{"sites": 1}')
    code, out, err = run(*argv)
    assert (code, err, json.loads(out)["cached"]) == (0, "", False)
    assert json.loads(run(*argv)[1])["cached"]


def test_an_unwritable_report_file_fails_before_solving(tmp_path):
    (tmp_path / "file").write_text("")
    code, _, err = run("prove", "--revision", "current", "--sarif", tmp_path / "file" / "x")
    assert code == 2 and len(err.splitlines()) == 1


@pytest.mark.slow  # solving and judging one legacy shape: 20 to 60 s
def test_sarif_puts_a_witness_at_the_c_line_the_sanitizer_named():
    report = prove("legacy", only=[Shape(3, False, "float32")])
    with Judges("legacy", jobs=1, use_torch=False) as judges:
        judge_witnesses(report, judges)
    results = json.loads(formats.sarif(report, KERNEL))["runs"][0]["results"]
    junit = ET.fromstring(formats.junit_xml(report))
    assert int(junit.get("failures")) == len(results) > 0
    overflow = next(r for r in results if "bias_shape.groups_mul" in r["message"]["text"])
    where = overflow["locations"][0]["physicalLocation"]
    assert where["artifactLocation"]["uri"] == "convcheck/ops/convolution/native/checks_legacy.c"
    source = (KERNEL.directory / "checks_legacy.c").read_text().splitlines()
    line = source[where["region"]["startLine"] - 1]
    assert "groups" in line and "*" in line, line


def test_ci_fails_naming_a_site_of_current_not_proven(tmp_path, monkeypatch):
    """The gate itself (``gaps`` on current is empty: the passing ci test holds that)."""
    unproven = "output_sizes.dim0.times_stride (signed-integer-overflow): unknown on rank 3"
    # The module, not the function ``convcheck.solver.prove`` that shadows its name.
    module = importlib.import_module("convcheck.solver.prove")
    monkeypatch.setattr(module, "gaps", lambda revision, op: [unproven])
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    code, out, err = run(
        "ci", "--no-torch", "--cases", 16, "--corpus", corpus, "--results", tmp_path / "r"
    )
    assert code == 1 and "verdict: FAILED" in out
    assert unproven in out and unproven in err
    suite = ET.parse(tmp_path / "r" / "junit.xml").getroot()
    failed = [c for c in suite.iter("testcase") if c.find("failure") is not None]
    assert [c.get("classname") for c in failed] == ["convcheck.prove"]
    assert unproven in failed[0].find("failure").text


def test_ci_proves_current_only():
    assert ci.prove_sites("legacy", io.StringIO()) == []
