"""What a campaign's last lines and exit code claim: the same on a corpus that knows its
findings as on an empty one (exit 1 for findings, new or known), and never "no kernel
bugs" from a campaign that judged nothing."""

import io
import re

import pytest
from hostile import build

from convcheck.cli import main

# A campaign on legacy that finds a dozen bugs in half a second.
FOUND = ("--revision", "legacy", "--no-torch", "--cases", "3000", "--seed", "5", "--jobs", "1")


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], out, err)
    return code, out.getvalue(), err.getvalue()


def bugs_line(out):
    return re.search(r"^(\d+) kernel bugs? \((\d+) new", out, re.M)


def test_a_campaign_again_on_its_own_corpus_counts_and_exits_the_same(tmp_path):
    first = run("fuzz", *FOUND, "--no-minimize", "--corpus", tmp_path)
    again = run("fuzz", *FOUND, "--no-minimize", "--corpus", tmp_path)
    assert first[0] == again[0] == 1, (first, again)
    counts = [bugs_line(out) for _, out, _ in (first, again)]
    assert counts[0] and counts[1], (first[1], again[1])
    # The same cases, the same findings: the same bugs, new the first time only.
    assert counts[0].group(1) == counts[1].group(1), (first[1], again[1])
    assert counts[0].group(2) == counts[0].group(1) and counts[1].group(2) == "0"


def test_a_minimised_campaign_again_on_its_own_corpus_counts_the_same(tmp_path):
    first = run("fuzz", *FOUND, "--minimize-time", "30", "--corpus", tmp_path)
    again = run("fuzz", *FOUND, "--no-minimize", "--corpus", tmp_path)
    assert first[0] == again[0] == 1, (first, again)
    assert bugs_line(first[1]).group(1) == bugs_line(again[1]).group(1), (first[1], again[1])


@pytest.fixture(scope="module")
def hanging(tmp_path_factory):
    return build(tmp_path_factory.mktemp("hanging"), "HANG")


# Every call hangs past the per-case timeout: the deadline cuts each batch short, so not
# one case is judged, on any machine (as --jobs 64 on two cores, whose shards were still
# starting when the budget ran out).
@pytest.mark.parametrize("jobs", [1, 2], ids=["one-process", "shards"])
def test_a_campaign_that_judged_no_case_does_not_say_no_kernel_bugs(hanging, tmp_path, jobs):
    code, out, err = run(
        "fuzz", "--revision", "current", "--target", hanging, "--no-torch", "--time", "1",
        "--timeout", "3600", "--jobs", jobs, "--corpus", tmp_path,
    )  # fmt: skip
    assert code == 2, out + err
    assert "no kernel bugs" not in out, out
    assert re.search(r"^0 cases judged", out, re.M), out
    last = err.splitlines()[-1]
    assert last.startswith("convcheck: the campaign judged no case"), err
    assert "Traceback" not in err
