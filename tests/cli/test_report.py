"""What people read: the case line, the final table, the live progress, the HTML report.

The table and the page are rendered from hand-built findings (no worker, no torch), so
each rule of the layout is checked on its own; one seeded campaign runs them end to end.
"""

import io
import os
import re
import sys
import time
from types import SimpleNamespace

import pytest
from builders import conv, conv_t, t

from convcheck import report_html
from convcheck.campaign import Budget, Campaign
from convcheck.cli import main
from convcheck.describe import describe_case, describe_int
from convcheck.errors import ConvcheckError
from convcheck.findings import Finding, FindingKind
from convcheck.outcome import Outcome
from convcheck.progress import Progress
from convcheck.report import bug_rows, format_campaign, write_report


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], out, err)
    return code, out.getvalue(), err.getvalue()


# -- the case line ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, shown",
    [
        (0, "0"),
        (65535, "65535"),
        (2**16, "2^16"),
        (2**31 - 1, "2^31-1"),
        (2**32 + 1, "2^32+1"),
        (2**62, "2^62"),
        (2**63 - 2, "2^63-2"),
        (-(2**63), "-2^63"),
        (6148914691236517206, "6148914691236517206"),  # near no power of two
        (2**40 + 3, str(2**40 + 3)),
    ],
)
def test_a_large_integer_near_a_power_of_two_reads_as_that_power(value, shown):
    assert describe_int(value) == shown


def test_every_tensor_carries_its_own_dtype_sizes_and_order():
    case = conv(
        input=t(1, 2, 5, 5, order=(0, 2, 3, 1)),
        weight=t(4, 2, 3, 3),
        bias=t(0, dtype="bfloat16"),
        out=t(1, 4, 3, 3, dtype="int64"),
        stride=(1, 2),
        padding=(2**62,),
        dilation=(1, 1),
        groups=0,
    )
    assert describe_case(case) == (
        "in=f32[1,2,5,5]{0,2,3,1} w=f32[4,2,3,3] b=bf16[0] out=i64[1,4,3,3] "
        "s=[1,2] p=[2^62] d=[1,1] groups=0"
    )


def test_a_transposed_case_shows_its_output_padding_and_no_bias_when_it_has_none():
    text = describe_case(conv_t(bias=None, output_padding=(1,)))
    assert text == "in=f32[1,4,5] w=f32[4,2,3] out=f32[1,2,7] s=[1] p=[0] d=[1] transposed op=[1]"


# -- the final table ----------------------------------------------------------------------

CRASH = Outcome.crashed("SEGV null", "regular_convolution conv_loops.c:203")
ACCEPT = Outcome.accept((1, 4, 3))


def finding(kind, *signature, case=None, native=ACCEPT):
    outcomes = {"native": native, "torch": Outcome.reject("torch.x")}
    return Finding(kind, (kind, *signature), case or conv(), outcomes, f"why {signature[-1]}")


BOOL_BIAS = conv(bias=t(4, dtype="bool"))
FINDINGS = [
    finding("torch-bug", "crash SIGSEGV", case=conv(groups=2)),
    finding("torch-bug", "verdict: oneDNN accept", case=conv(groups=3)),
    finding("overflow", "output_sizes.dim*.two_pad", case=conv(padding=(2**62,))),
    finding("crash", "SEGV null", "bias_load_fn.call", case=BOOL_BIAS, native=CRASH),
    # Another bug (a dilation's) that the same call shows.
    finding("ordering", "output_sizes.dim*.dilated_kernel", case=conv(padding=(2**62,))),
    finding("missing-check", "bias.length", case=conv(bias=t(3))),
]


def campaign_with(findings, known=(), corpus_dir=None):
    campaign = Campaign(None, corpus_dir, known=set(known), budget=Budget(cases=1))
    campaign.stats.cases = 1  # its budget judged
    for seconds, f in enumerate(findings):
        campaign.found[f.key] = f
        campaign.stats.first_found[f.key] = float(seconds)
    return campaign


ARGS = SimpleNamespace(revision="legacy", target=None, engine="random", seed=0)


def report(findings, show_torch_bugs=False, **options):
    args = SimpleNamespace(**vars(ARGS), show_torch_bugs=show_torch_bugs)
    return format_campaign(campaign_with(findings, **options), args).splitlines()


def test_kernel_bugs_come_first_and_torch_is_one_counted_line(tmp_path):
    lines = report(FINDINGS, corpus_dir=tmp_path)
    kinds = [line.split()[0] for line in lines if re.match(r"  \w", line)]
    assert kinds == ["kind", "crash", "missing-check", "ordering", "overflow"]
    assert (
        lines[1] == f"4 kernel bugs (4 new, written to {tmp_path}/), each with its minimised case:"
    )
    torch_lines = [line for line in lines if "torch" in line and "bug" in line]
    assert torch_lines == [
        f"torch: 2 bugs of its own, in {tmp_path / 'torch'}; --show-torch-bugs lists them"
    ]
    assert not any("SIGSEGV" in line for line in lines)


def test_a_row_holds_the_c_line_and_the_upstream_bug_class():
    lines = report(FINDINGS)
    crash = next(i for i, line in enumerate(lines) if line.startswith("  crash"))
    # The bug's name, then the C line an editor jumps to, then the root cause.
    row = r" bool bias +conv_loops\.c:203 SEGV null \| bias_load_fn\.call$"
    assert re.search(row, lines[crash])
    assert lines[crash + 1].strip() == describe_case(BOOL_BIAS)
    missing = next(line for line in lines if line.startswith("  missing-check"))
    assert "conv_loops" not in missing
    assert re.search(r" wrong bias length accepted +bias\.length$", missing)


def test_the_c_line_is_a_crashs_own():
    """An overflow on a case whose run crashed elsewhere names no C line of its own."""
    lines = report([finding("overflow", "output_sizes.dim*.narrow", native=CRASH)])
    row = next(line for line in lines if line.startswith("  overflow"))
    assert "conv_loops" not in row


def test_the_summary_says_when_shards_lost_cases():
    campaign = campaign_with(FINDINGS[2:4])
    campaign.shard_failures = ["shard crash: SIGKILL", "shard hang: 130 s"]
    summary = format_campaign(campaign, ARGS).splitlines()[0]
    assert summary.endswith("; 2 shard failures, their cases unjudged (shard crash: SIGKILL)")
    campaign.shard_failures = []
    assert "shard" not in format_campaign(campaign, ARGS).splitlines()[0]


def test_the_summary_keeps_judging_and_minimising_apart():
    campaign = campaign_with(FINDINGS[2:4])
    campaign.stats.cases = 800
    campaign.stats.started = time.monotonic() - 10
    campaign.stats.explored = 4.0
    campaign.minimized.add(FINDINGS[3].key)
    summary = format_campaign(campaign, SimpleNamespace(**vars(ARGS))).splitlines()[0]
    assert re.fullmatch(
        r"convcheck fuzz: revision legacy, engine random, seed 0: 800 cases in 4\.0 s "
        r"\(200/s\), minimised in \d+\.\d s",
        summary,
    ), summary
    assert float(summary.rsplit(" ", 2)[-2]) >= 6.0


def test_findings_of_one_case_share_its_line():
    lines = report(FINDINGS)
    shared = describe_case(conv(padding=(2**62,)))
    assert sum(line.strip() == shared for line in lines) == 1
    at = next(i for i, line in enumerate(lines) if line.startswith("  ordering"))
    assert lines[at + 1].startswith("  overflow") and lines[at + 2].strip() == shared


def test_the_findings_of_one_known_bug_class_are_one_row():
    """Padding past int64 shows as an overflow, an ordering and, on a kernel that crashes
    at that UB, a crash: one bug, one row, standing for the others."""
    padding = conv(padding=(2**62,))
    lines = report(
        [
            finding("ordering", "output_sizes.dim*.two_pad", case=padding),
            finding("overflow", "output_sizes.dim*.two_pad", case=conv(padding=(2**61,))),
            finding("crash", "signed-integer-overflow", "output_sizes.dim*.two_pad", case=padding),
            finding("ordering", "output_sizes.dim*.dilated_kernel", case=padding),
            # No known class: undefined behaviour at one site of the model is one bug.
            finding("crash", "signed-integer-overflow", "channels.groups_mul", case=padding),
            finding("overflow", "channels.groups_mul", case=conv(groups=-(2**62))),
            finding("overflow", "output_sizes.dim*.dilated_u", case=conv(groups=3)),
        ]
    )
    assert lines[1].startswith("4 kernel bugs")
    rows = [line for line in lines if re.match(r"  (crash|ordering|overflow) ", line)]
    assert len(rows) == 4
    padding_row = next(r for r in rows if "unbounded padding" in r)
    assert "two_pad (+2 more: overflow, ordering)" in padding_row
    assert any("unbounded dilation" in r and "more" not in r for r in rows)
    assert any("channels.groups_mul (+1 more: overflow)" in r for r in rows)
    assert any("dilated_u" in r and "more" not in r for r in rows)


def test_where_the_kernel_parts_one_computation_is_one_row():
    """A check wrong both ways, the check one helper makes of every parameter array, and
    the output size with the checks that read it: each one row, naming what tells its
    other findings apart. Another check is a row of its own."""
    lines = report(
        [
            finding("infidelity", "groups.gt_weight0", "kernel passes", case=conv(groups=2)),
            finding("infidelity", "groups.gt_weight0", "kernel rejects", case=conv(groups=3)),
            finding("infidelity", "stride.length", "kernel rejects", case=conv(stride=(1,))),
            finding("infidelity", "padding.length", "kernel rejects", case=conv(padding=(0,))),
            finding("infidelity", "output.invalid", "kernel rejects", case=conv(groups=4)),
            finding("infidelity", "output_sizes", "sizes differ", case=conv(groups=5)),
            finding("infidelity", "bias.length", "kernel passes", case=conv(bias=t(3))),
        ]
    )
    rows = [line for line in lines if line.startswith("  infidelity")]
    assert len(rows) == 4, rows
    assert any(
        "gt_weight0 | kernel passes it, accepts (+1 more: kernel rejects)" in r for r in rows
    )
    assert any("padding.length | kernel rejects (+1 more: stride.length)" in r for r in rows)
    assert any("(+1 more: output_sizes | sizes differ)" in r for r in rows)
    assert any("bias.length | kernel passes" in r and "more" not in r for r in rows)


def legacy_campaign(findings, minimised=True, revision="legacy"):
    """A campaign of ``revision`` whose findings were minimised, as ``fuzz`` leaves them."""
    campaign = campaign_with(findings)
    campaign.judges = SimpleNamespace(revision=revision)
    if minimised:
        campaign.minimized.update(f.key for f in findings)
    return campaign


# Bugs of legacy that the thread does not name, on calls the current checks reject.
STRIDE_PAST_32_BITS = [
    finding("missing-check", "stride.range", case=conv(stride=(2**31,))),
    finding("overflow", "output_sizes.dim*.plus_dilated", case=conv(stride=(2**63 - 1,))),
]
KERNEL_OF_0 = finding("missing-check", "kernel.nonpos", case=conv(weight=t(4, 2, 0)))
CHANNELS_LAST = conv(
    input=t(1, 2, 5, 5, order=(0, 2, 3, 1)), weight=t(4, 2, 3, 3), out=t(1, 4, 3, 3)
)


def test_a_bug_the_thread_does_not_name_is_one_row_per_fix_in_current():
    """Minimised, each of legacy's bugs is wrong in one way: the check of current that
    rejects the call is its fix, and the findings one fix removes are one row."""
    findings = [
        *STRIDE_PAST_32_BITS,
        KERNEL_OF_0,
        finding("over-strict", "dim_order.in_out", case=CHANNELS_LAST),
        FINDINGS[3],
    ]
    rows = bug_rows(legacy_campaign(findings))
    assert [(r.bug, r.finding.key, len(r.others)) for r in rows] == [
        ("bool bias", FINDINGS[3].key, 0),  # the thread's classes come first
        ("current: kernel.nonpos", KERNEL_OF_0.key, 0),
        ("current: stride.range", STRIDE_PAST_32_BITS[0].key, 1),
        ("current: accepts", "over-strict | dim_order.in_out", 0),  # its fix: accept it
    ]
    lines = format_campaign(legacy_campaign(findings), ARGS).splitlines()
    assert lines[1].startswith("4 kernel bugs")
    stride = next(line for line in lines if "current: stride.range" in line)
    assert stride.startswith("  missing-check") and stride.endswith(
        "stride.range (+1 more: overflow)"
    )


@pytest.mark.parametrize(
    "campaign",
    [
        legacy_campaign(STRIDE_PAST_32_BITS, minimised=False),
        legacy_campaign(STRIDE_PAST_32_BITS, revision="current"),
    ],
    ids=["not minimised", "current itself"],
)
def test_without_a_minimised_case_of_an_older_revision_no_fix_is_named(campaign):
    """An unminimised case may be wrong in more ways than its bug's; on ``current`` there
    is no later revision to name a fix."""
    rows = bug_rows(campaign)
    assert [(r.bug, len(r.others)) for r in rows] == [("", 0), ("", 0)]
    assert "bug" not in format_campaign(campaign, ARGS).splitlines()[2]  # no such column


def test_a_bug_the_corpus_had_shows_the_corpus_case(tmp_path):
    """A campaign minimises only what is new: a finding met again is shown, and named, by
    the minimised case its corpus file keeps, not by the call that met it again."""
    from convcheck import corpus

    kept = STRIDE_PAST_32_BITS[0]
    corpus.write(tmp_path, kept, "legacy", None, {})
    again = finding("missing-check", "stride.range", case=conv(stride=(2**40,), groups=2))
    campaign = legacy_campaign([again], minimised=False)
    campaign.corpus_dir, campaign.known = tmp_path, {kept.key}
    [row] = bug_rows(campaign)
    assert (row.finding.case, row.bug, row.found) == (kept.case, "current: stride.range", "known")


def test_a_report_longer_than_a_screen_folds(monkeypatch):
    """Past a screen, the rows are cut to its width (the C line kept, the others
    counted) and a case is shown only under the rows to look at: new, and of no upstream
    class. The last line says where the rest is."""
    from convcheck import report as text

    monkeypatch.setattr(text, "SCREEN_LINES", 11)
    padding = conv(padding=(2**62,))
    crash = Outcome.crashed("signed-integer-overflow", "output_size checks_legacy.c:160")
    findings = [
        finding(
            "crash",
            "signed-integer-overflow",
            "output_sizes.dim*.two_pad",
            case=padding,
            native=crash,
        ),
        finding("overflow", "output_sizes.dim*.two_pad", case=conv(padding=(2**61,))),
        *STRIDE_PAST_32_BITS,
        KERNEL_OF_0,
    ]
    campaign = legacy_campaign(findings)
    campaign.known.add(KERNEL_OF_0.key)
    lines = format_campaign(campaign, SimpleNamespace(**vars(ARGS), report="r.html")).splitlines()
    assert lines[1].endswith("the new ones of no upstream class with their minimised case:")
    rows = [line for line in lines if re.match(r"  [a-z-]+ ", line)][1:]
    assert len(rows) == 3 and all(len(row) <= text.SCREEN_COLUMNS for row in rows)
    assert rows[0].endswith("checks_legacy.c:160 output_sizes.dim*.two_pad (+1 more)")
    cases = [line.strip() for line in lines if line.startswith(" " * 8)]
    assert cases == [describe_case(STRIDE_PAST_32_BITS[0].case)]  # not the known one's
    assert lines[-1] == "details: the HTML report (every row whole)"
    monkeypatch.setattr(text, "SCREEN_LINES", 7)  # no room for any case
    lines = format_campaign(campaign, ARGS).splitlines()
    assert lines[1].endswith("each in its corpus file with its minimised case:")
    assert not any(line.startswith(" " * 8) or "tensors:" in line for line in lines)


def test_show_torch_bugs_lists_them_after_the_kernel():
    lines = report(FINDINGS, show_torch_bugs=True)
    kinds = [line.split()[0] for line in lines if re.match(r"  \w", line)]
    assert kinds[-2:] == ["torch-bug", "torch-bug"]
    assert not any(line.startswith("torch:") for line in lines)


def test_known_findings_are_marked_and_not_counted_new():
    known = [FINDINGS[3].key]
    lines = report(FINDINGS, known=known)
    assert lines[1].startswith("4 kernel bugs (3 new)")
    crash = next(line for line in lines if line.startswith("  crash"))
    assert " known " in crash


def test_a_kernel_that_passes_a_check_and_rejects_later_says_where():
    later = Outcome.reject("output.invalid")
    passed = finding("infidelity", "groups.gt_weight0", "kernel passes", native=later)
    (row,) = [line for line in report([passed]) if line.startswith("  infidelity")]
    assert row.endswith("groups.gt_weight0 | kernel passes it, rejects at output.invalid"), row
    accepted = finding("infidelity", "groups.gt_weight0", "kernel passes")
    (row,) = [line for line in report([accepted]) if line.startswith("  infidelity")]
    assert row.endswith("groups.gt_weight0 | kernel passes it, accepts"), row


def test_no_findings_says_so_in_one_line():
    assert report([])[1:] == ["no kernel bugs"]


def test_no_case_judged_is_not_no_findings():
    campaign = campaign_with([])
    campaign.stats.cases = 0
    lines = format_campaign(campaign, SimpleNamespace(**vars(ARGS))).splitlines()
    assert lines[1:] == ["0 cases judged: nothing to say of the kernel"]


def test_a_terminal_gets_the_same_report_in_colour(monkeypatch):
    monkeypatch.setenv("TERM", "xterm-256color")
    text = "\n".join(report(FINDINGS))
    terminal, log = _Terminal(), io.StringIO()
    write_report(text, terminal)
    write_report(text, log)
    assert log.getvalue() == text + "\n"
    coloured = terminal.getvalue()
    assert "\x1b[" in coloured
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == text + "\n"


# -- live progress ------------------------------------------------------------------------


def test_a_log_gets_a_line_now_and_then_and_one_at_the_end():
    stream = io.StringIO()
    progress = Progress(stream, Budget(cases=2048), "random", every=3600)
    for cases in (256, 512, 768):
        progress(cases, 1.0, {FindingKind.CRASH: 2, FindingKind.TORCH_BUG: 1}, "")
    assert stream.getvalue() == ""  # the hour is not up
    progress.close()
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1
    assert lines[0].endswith(
        "768 cases (768/s), 1,280 cases (~2 s) left; findings: crash 2, torch-bug 1"
    )
    progress = Progress(stream, Budget(cases=2048), "random", every=0)
    progress(256, 1.0, {}, "")
    assert "random: 256 cases (256/s), 1,792 cases (~7 s) left" in stream.getvalue()


def test_a_failed_campaign_ends_its_log_with_its_error_alone():
    stream = io.StringIO()
    with pytest.raises(OSError), Progress(stream, Budget(cases=10), "random", every=3600) as p:
        p(8, 1.0, {}, "")
        raise OSError("disk full")
    assert stream.getvalue() == ""


def test_minimising_leaves_the_rate_of_judging_as_it_was():
    stream = io.StringIO()
    with Progress(stream, Budget(cases=300), "random", every=0) as progress:
        progress(300, 3.0, {}, "")
        progress(300, 30.0, {}, "minimised crash")
    assert "300 cases (100/s)" in stream.getvalue().splitlines()[-1]


@pytest.mark.parametrize(
    "budget, left",
    [
        (Budget(cases=500, until_first=True), "400 cases (~100 s) left, or the first finding"),
        (Budget(until_first=True), "until the first finding"),
        (Budget(seconds=60, cases=500), "35 s or 400 cases (~100 s) left"),
    ],
)
def test_what_is_left_names_every_limit(budget, left):
    progress = Progress(io.StringIO(), budget, "random")
    progress(100, 25.0, {}, "")
    assert progress.line().endswith(f"(4/s), {left}; findings: none yet")


def test_a_time_budget_counts_down_and_a_note_is_kept():
    stream = io.StringIO()
    with Progress(stream, Budget(seconds=30), "atheris", every=0) as progress:
        progress(100, 12.0, {}, "minimised crash")
    last = stream.getvalue().splitlines()[-1]
    assert "atheris: 100 cases (8/s), 18 s left; findings: none yet; minimised crash" in last


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_a_terminal_gets_a_live_display(monkeypatch):
    monkeypatch.delenv("TERM", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    stream = _Terminal()
    progress = Progress(stream, Budget(cases=2048), "random")
    assert progress.live
    progress(1024, 2.0, {FindingKind.CRASH: 3}, "")
    progress.close()
    # Without its colours; a kind and its count are held together by a no-break space.
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", stream.getvalue()).replace("\u00a0", " ")
    assert "1,024 cases" in shown and "1,024 cases (~2 s) left" in shown
    assert "crash 3" in shown
    assert "(512/s)" not in shown  # the plain line's wording: a terminal never gets one


# -- the HTML report ------------------------------------------------------------------------


def test_the_page_holds_the_plot_and_the_table_in_one_file(tmp_path):
    pytest.importorskip("matplotlib")
    import base64

    from convcheck.report_html import fuzz_report

    args = SimpleNamespace(**vars(ARGS), show_torch_bugs=False)
    page = fuzz_report(tmp_path / "r.html", campaign_with(FINDINGS), args, "summary").read_text()
    png = base64.b64decode(re.search(r'src="data:image/png;base64,([^"]+)"', page).group(1))
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 10_000
    assert "<h2>Kernel bugs: 4</h2>" in page
    assert "<code>conv_loops.c:203</code>" in page and "bool bias" in page
    assert "<summary>torch: 2 bugs of its own</summary>" in page
    # A case's parts are HTML-escaped text: nothing in it can become markup.
    assert "<span>in=f32[1,2,5]</span>" in page


def test_the_plot_counts_each_kind_over_time(monkeypatch):
    pytest.importorskip("matplotlib")
    from convcheck import report_html

    drawn = []

    class Axes:
        def step(self, x, y, **style):
            drawn.append((style["label"], x, y, style["linestyle"]))

        def __getattr__(self, name):
            return lambda *a, **k: None

    class Figure:
        def __init__(self, **_):
            pass

        def subplots(self):
            return Axes()

        def savefig(self, out, format):
            out.write(b"png")

    monkeypatch.setattr("matplotlib.figure.Figure", Figure)
    first_found = {"crash | a": 2.0, "crash | b": 1.0, "torch-bug | c": 3.0}
    assert report_html.findings_over_time(first_found, 10.0) == b"png"
    assert drawn == [
        ("crash (2)", [0.0, 1.0, 2.0, 10.0], [0, 1, 2, 2], "-"),
        ("torch-bug (1)", [0.0, 3.0, 10.0], [0, 1, 1], "--"),
    ]


def test_a_report_that_cannot_be_written_is_refused_before_the_campaign(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    code, out, err = run(
        "fuzz",
        "--no-torch",
        "--cases",
        1,
        "--corpus",
        tmp_path / "c",
        "--report",
        blocker / "report.html",
    )
    assert code == 2 and out == ""
    assert err.startswith("convcheck: report folder") and len(err.splitlines()) == 1


@pytest.mark.parametrize("where", ["folder", "root", "fifo"])
@pytest.mark.parametrize("command", ["fuzz", "ci"])
def test_a_report_naming_no_file_is_refused_before_the_campaign(tmp_path, where, command):
    pytest.importorskip("matplotlib")
    report = {"folder": tmp_path, "root": "/", "fifo": tmp_path / "fifo"}[where]
    if where == "fifo":
        os.mkfifo(report)
    corpus = tmp_path / "c"
    # ci replays the corpus: it must be there; fuzz makes it.
    options = ("--corpus", corpus, "--results", tmp_path / "r") if command == "ci" else ()
    if command == "ci":
        corpus.mkdir()
    else:
        options = ("--corpus", corpus)
    code, out, err = run(command, "--no-torch", "--cases", 1, *options, "--report", report)
    assert (code, out) == (2, ""), err
    assert err.startswith(f"convcheck: --report {report}: "), err
    assert len(err.splitlines()) == 1 and "cannot write" not in err, err
    assert not list(corpus.glob("*.json"))


def test_a_report_that_fails_after_the_campaign_keeps_its_findings(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")

    def full(*args):
        raise ConvcheckError("report file r.html: cannot write: No space left on device")

    monkeypatch.setattr(report_html, "fuzz_report", full)
    code, out, err = run(
        *("fuzz", "--revision", "legacy", "--no-torch", "--cases", 512, "--no-minimize"),
        *("--corpus", tmp_path, "--report", tmp_path / "r.html"),
    )
    assert code == 1, err
    assert "kernel bug" in out
    assert (
        err.splitlines()[-1]
        == "convcheck: report file r.html: cannot write: No space left on device"
    )


def test_a_report_without_matplotlib_is_refused_before_the_campaign(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # what an absent package imports as
    code, out, err = run(
        *("fuzz", "--no-torch", "--cases", 1, "--corpus", tmp_path, "--report", tmp_path / "r.html")
    )
    assert (code, out) == (2, "")
    assert err == "convcheck: --report needs matplotlib: pip install 'convcheck[report]'\n"


def test_a_seeded_campaign_writes_the_report_it_prints(tmp_path):
    pytest.importorskip("matplotlib")
    page = tmp_path / "report.html"
    code, out, err = run(
        "fuzz",
        "--no-torch",
        "--cases",
        256,
        "--seed",
        0,
        "--no-minimize",
        "--corpus",
        tmp_path / "corpus",
        "--report",
        page,
    )
    assert code == 1, err
    assert out.splitlines()[-1] == f"report: {page}"
    text = page.read_text()
    kinds = re.findall(r"^  ([a-z-]+) ", out, re.M)[1:]  # the rows, after the header's
    assert kinds and kinds == re.findall(r'<tr><td class="whole">([a-z-]+)</td>', text)
    # A log (stderr is no terminal here) gets plain lines, the last one the final count.
    assert err.splitlines()[-1].startswith("[") and "256 cases" in err.splitlines()[-1]
