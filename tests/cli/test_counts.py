"""What a campaign's last lines and exit code claim: the same on a corpus that knows its
findings as on an empty one (exit 1 for findings, new or known), and never "no kernel
bugs" from a campaign that judged nothing."""

import io
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hostile import build

from convcheck import campaign
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


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=lambda s: s.name)
def test_a_signal_while_minimising_ends_with_the_report(tmp_path, monkeypatch, signum):
    real, calls = campaign.minimize, []

    def signalled(*args, **kwargs):
        # Delivered in the main thread, between two of the shrinker's bytecodes.
        calls.append(os.kill(os.getpid(), signum))
        return real(*args, **kwargs)

    monkeypatch.setattr(campaign, "minimize", signalled)
    code, out, err = run("fuzz", *FOUND, "--corpus", tmp_path)
    assert calls, "nothing was minimised: the test proves nothing"
    assert code == 1, out + err
    assert bugs_line(out), out
    assert err.splitlines()[-1].startswith("convcheck: stopped by a signal"), err


# ``convcheck minimize`` with the shrinker's first candidate signalled, in a child: a
# SIGTERM it does not handle would end the test's own process.
SIGNALLED_MINIMIZE = """
import os, sys
from convcheck import shrink
from convcheck.cli import main
real = shrink.Shrinker.shrink
def signalled(self, case):
    os.kill(os.getpid(), int(sys.argv[1]))
    return real(self, case)
shrink.Shrinker.shrink = signalled
sys.exit(main(["minimize", "--revision", "legacy", "--no-torch", sys.argv[2]]))
"""


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=lambda s: s.name)
def test_a_signal_while_minimising_one_case_prints_the_smallest_so_far(signum):
    example = (
        Path(__file__).parents[2] / "convcheck/examples/groups_overflow_before_validation.json"
    )
    done = subprocess.run(
        [sys.executable, "-c", SIGNALLED_MINIMIZE, str(int(signum)), str(example)],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("finding: "), done.stdout
    assert '"groups"' in done.stdout  # the case as far as it was shrunk
    assert done.stderr.splitlines()[-1].startswith("convcheck: stopped by a signal"), done.stderr
