"""The commands end to end, on the embedded kernel (torch left out where it adds nothing)."""

import contextlib
import io
import json
import os
import re
import xml.etree.ElementTree as ET
from multiprocessing import resource_tracker
from pathlib import Path

import pytest

from convcheck.cli import main
from convcheck.commands import example_paths
from convcheck.sandbox.descendants import MARKER, POOL_PROCESSES


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], out, err)
    return code, out.getvalue(), err.getvalue()


def example(name):
    return next(p for p in example_paths() if p.stem == name)


def test_judge_json_shows_every_judge_and_the_crash():
    code, out, _ = run("judge", example("groups_zero"), "--json", "--no-torch")
    data = json.loads(out)
    assert code == 1
    assert data["model"]["check"] == "input.channels"
    assert data["native"]["verdict"] == "crash"
    assert data["native"]["crash"]["kind"] == "division-by-zero"
    kinds = {f["kind"] for f in data["findings"]}
    assert kinds == {"crash", "ordering"}


# A case budget and a seed: the same campaign, and the same findings, on any machine.
CAMPAIGN = ("--no-torch", "--cases", 2048, "--seed", 0, "--jobs", 2)


@pytest.fixture(scope="module")
def legacy_corpus(tmp_path_factory):
    """Unminimised: minimising is `minimize`'s test below, and the quality campaigns'."""
    folder = tmp_path_factory.mktemp("corpus")
    code, out, err = run("fuzz", *CAMPAIGN, "--no-minimize", "--corpus", folder)
    assert code == 1, err
    assert "kernel bugs" in out and "groups = 0" in out
    assert "2,048 cases in" in out
    return folder


def test_a_corpus_entry_is_judged_and_explained_like_its_case(legacy_corpus, tmp_path):
    """The file a campaign wrote is what a person judges again: its case, not an error."""
    entry = min(legacy_corpus.glob("crash-*.json"))
    case = tmp_path / "case.json"
    case.write_text(json.dumps(json.loads(entry.read_text())["case"]))

    def same(*command):
        (code, out, err), (code_case, out_case, _) = (
            run(*command, path, "--revision", "legacy") for path in (entry, case)
        )
        assert code in (0, 1), err
        assert (code, out.replace(str(entry), "")) == (code_case, out_case.replace(str(case), ""))
        return code, out

    code, out = same("judge", "--no-torch")
    assert code == 1 and "native      crash" in out
    same("explain")


def test_a_case_budget_and_a_seed_give_the_same_findings(tmp_path):
    runs = []
    for name in ("a", "b"):
        code, out, _ = run(
            "fuzz", *CAMPAIGN[:2], 300, *CAMPAIGN[3:], "--no-minimize", "--corpus", tmp_path / name
        )
        assert code == 1 and "300 cases in" in out
        runs.append(sorted(p.name for p in (tmp_path / name).glob("*.json")))
    assert runs[0] == runs[1] and runs[0]


def test_until_first_stops_at_the_first_finding_about_the_kernel(tmp_path):
    code, out, _ = run("fuzz", *CAMPAIGN, "--until-first", "--no-minimize", "--corpus", tmp_path)
    assert code == 1
    # The first batches hold 8 and 16 cases (the solver's first, with z3); one of the
    # first two has a finding on legacy: the campaign stops after it.
    judged = int(re.search(r"([\d,]+) cases in", out).group(1).replace(",", ""))
    assert judged in (8, 24), out


def test_fuzz_writes_its_findings(legacy_corpus):
    files = list(legacy_corpus.glob("*.json"))
    assert len(files) >= 5
    for path in files:
        data = json.loads(path.read_text())
        assert data["revision"] == "legacy" and data["signature"][0] == data["kind"]


def test_replay_reproduces_on_legacy_and_is_clean_on_current(legacy_corpus):
    code, out, _ = run(
        "replay", legacy_corpus, "--revision", "legacy", "--expect-reproduce", "--no-torch"
    )
    assert code == 0, out
    code, out, _ = run("replay", legacy_corpus, "--revision", "current", "--no-torch")
    assert code == 0, out
    assert out.strip().endswith("0 failed")


def _children_not_ours() -> set[int]:
    """This process's children that it did not start: orphans that came to it (it is a
    subreaper once a pool has run here), alive or not yet reaped. Its own are its pools'
    processes, and multiprocessing's resource tracker (a solver pool starts it, and it
    serves the next)."""
    own = {os.getpid(), *POOL_PROCESSES, resource_tracker._resource_tracker._pid}
    found = set()
    for task in os.listdir("/proc/self/task"):
        with contextlib.suppress(OSError):
            found |= {int(c) for c in Path(f"/proc/self/task/{task}/children").read_text().split()}
    watchdog = f"{MARKER}={os.getpid()}.".encode()
    return {
        pid
        for pid in found - own
        if watchdog not in _cmdline(pid)  # this process's own watchdog
    }


def _cmdline(pid: int) -> list[bytes]:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    return []


def test_ci_on_current_passes_and_writes_junit_and_sarif(legacy_corpus, tmp_path):
    before = _children_not_ours()
    code, out, err = run(
        "ci", "--no-torch", "--cases", 512, "--corpus", legacy_corpus, "--results", tmp_path
    )
    assert code == 0, out + err
    # The atheris engine's child leaves by os._exit: it waits for its watchdog first, so
    # no orphan of it comes here to die unreaped.
    left = _children_not_ours() - before
    assert left == set(), {pid: _cmdline(pid) for pid in left}
    suite = ET.parse(tmp_path / "junit.xml").getroot()
    names = [case.get("classname") for case in suite.iter("testcase")]
    assert names.count("convcheck.corpus") == len(list(legacy_corpus.glob("*.json")))
    assert names.count("convcheck.campaign") == 2
    assert suite.get("failures") == "0"
    assert json.loads((tmp_path / "results.sarif").read_text())["version"] == "2.1.0"


def test_ci_with_jobs_2_judges_its_campaigns_in_shards(legacy_corpus, tmp_path, monkeypatch):
    from convcheck import shards

    made, real = [], shards.Shards.__init__

    def counted(self, judges, count):
        made.append(count)
        real(self, judges, count)

    monkeypatch.setattr(shards.Shards, "__init__", counted)
    argv = ("ci", "--revision", "legacy", "--no-torch", "--cases", 512, "--jobs", 2)
    code, out, _ = run(*argv, "--corpus", legacy_corpus, "--results", tmp_path)
    assert code == 1 and "verdict: FAILED" in out
    assert made and set(made) == {2}, made
    suite = ET.parse(tmp_path / "junit.xml").getroot()
    assert [c.get("name") for c in suite.iter("testcase") if c.find("failure") is not None]


def test_ci_on_legacy_fails_with_findings_in_sarif(legacy_corpus, tmp_path):
    code, out, _ = run(
        "ci",
        "--revision",
        "legacy",
        "--no-torch",
        "--cases",
        256,
        "--corpus",
        legacy_corpus,
        "--results",
        tmp_path,
    )
    assert code == 1 and "verdict: FAILED" in out
    sarif = json.loads((tmp_path / "results.sarif").read_text())
    rules = {r["ruleId"] for r in sarif["runs"][0]["results"]}
    assert "crash" in rules
    described = {
        r["id"]: r["shortDescription"]["text"] for r in sarif["runs"][0]["tool"]["driver"]["rules"]
    }
    assert described["crash"].startswith("the kernel crashed")
    located = [r for r in sarif["runs"][0]["results"] if "locations" in r]
    uri = located[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri.startswith("convcheck/ops/convolution/native/") and uri.endswith(".c")


def test_minimize_keeps_the_signature_and_counts_calls_by_pass():
    code, out, _ = run(
        "minimize",
        example("groups_overflow_before_validation"),
        "--kind",
        "ordering",
        "--no-torch",
        "--verbose",
    )
    assert code == 1
    assert "signature: ordering | bias_shape.groups_mul" in out
    assert "<-- UB: signed-integer-overflow" in out
    total = int(re.search(r"^(\d+) calls, by pass", out, re.M).group(1))
    passes = re.findall(r"^  (\w+) +(\d+) calls +(\d+) shrinks$", out, re.M)
    assert {name for name, _, _ in passes} >= {"shrink_ints", "shrink_sizes", "drop_optionals"}
    assert sum(int(calls) for _, calls, _ in passes) == total
    assert all(int(shrinks) <= int(calls) for _, calls, shrinks in passes)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["fuzz", "--time=0"], "time=0.0 must be a positive, finite number of seconds"),
        (["fuzz", "--timeout", "nan"], "timeout=nan must be a positive, finite number"),
        (["fuzz", "--timeout", "inf"], "timeout=inf must be a positive, finite number"),
        (["ci", "--time=-1"], "time=-1.0 must be"),
        (["fuzz", "--cases", "0"], "cases=0 must be a positive integer"),
        (["fuzz", "--jobs", "two"], "jobs='two' must be a positive integer"),
        (["fuzz", "--jobs", "100000"], "jobs=100000 must be a positive integer of at most 64"),
        (["ci", "--jobs", "65"], "jobs=65 must be a positive integer of at most 64"),
        (["replay", "--jobs", "65"], "jobs=65 must be"),
        (["fuzz", "--engine", "afl"], "invalid choice: 'afl'"),
        (["replay", "/nonexistent-corpus"], "does not exist"),
        (
            ["judge", "--target", "/etc/hostname", "--no-torch", "missing.json"],
            "case file missing.json",
        ),
        (
            ["fuzz", "--target", "exectorch", "--no-torch", "--cases", "1"],
            "target='exectorch': op='convolution' has no such target (its targets: executorch,",
        ),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(argv, message):
    code, out, err = run(*argv)
    assert code == 2
    assert message in err and len(err.splitlines()) == 1


def test_a_target_that_is_not_a_library_is_one_line(tmp_path):
    fake = tmp_path / "libfake.so"
    fake.write_text("not an ELF file")
    code, _, err = run("judge", example("groups_zero"), "--target", fake, "--no-torch")
    assert code == 2 and len(err.splitlines()) == 1 and str(fake) in err


def _convolution_entry_in(folder):
    """A shipped convolution entry whose signature, the int32 narrowing of an output size,
    a pooling campaign meets too, copied into ``folder``."""
    shipped = Path(__file__).resolve().parents[2] / "corpus"
    entry = next(shipped.glob("overflow-output-sizes-dim-narrow-*.json"))
    (folder / entry.name).write_text(entry.read_text())
    return entry


def test_another_ops_entry_of_the_same_signature_is_not_this_campaigns(tmp_path):
    """A convolution entry whose signature a pooling campaign meets too (the int32
    narrowing of an output size) is another bug: the pooling finding is new, written with
    its own call, and the report shows no convolution call."""
    conv_entry = _convolution_entry_in(tmp_path)
    fuzz = "fuzz --op avg_pool2d --revision legacy --no-torch --no-minimize --jobs 1"
    _, out, _ = run(*fuzz.split(), "--corpus", tmp_path, "--cases", 3000, "--seed", 1)
    assert (tmp_path / conv_entry.name).read_text() == conv_entry.read_text()
    written = [json.loads(p.read_text()) for p in tmp_path.glob("avg-pool2d-overflow-*.json")]
    narrowed = [e for e in written if e["signature"][-1] == "output_sizes.dim*.narrow"]
    assert narrowed and "kernel_size" in narrowed[0]["case"], written
    assert " w=" not in out, out


def test_ci_of_another_op_replays_only_that_ops_entries(tmp_path):
    _convolution_entry_in(tmp_path)
    ci = "ci --op avg_pool2d --no-torch --jobs 1 --cases 2000 --seed 1"
    code, out, err = run(*ci.split(), "--corpus", tmp_path, "--results", tmp_path / "results")
    assert "replaying 0 corpus entries" in err
    assert code == 0 and "verdict: passed" in out, out
