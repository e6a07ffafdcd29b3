"""What a campaign's last lines and exit code claim: the same on a corpus that knows its
findings as on an empty one (exit 1 for findings, new or known), and never "no kernel
bugs" from a campaign that judged nothing."""

import io
import re

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
