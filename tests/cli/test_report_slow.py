"""The report as a person sees it: a seeded campaign's HTML page in headless Chromium, and
the atheris engine's progress and libFuzzer log. Slow: campaigns and a browser."""

import importlib.util
import os
import re
import shutil
import signal
import subprocess
import sys
from html import escape

import numpy as np
import pytest

pytestmark = pytest.mark.slow

CONVCHECK = (sys.executable, "-m", "convcheck")


def _run(command, timeout, **options):
    """A process group of its own, killed whole on a timeout: Chromium starts helpers."""
    child = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        **options,
    )
    try:
        out, err = child.communicate(timeout=timeout)
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.communicate()
    return child.returncode, out, err


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    pytest.skip("no headless Chromium here (Debian: apt-get install chromium)")


def test_the_html_report_shows_the_plot_and_the_table_in_a_browser(tmp_path):
    pytest.importorskip("matplotlib")
    image = pytest.importorskip("PIL.Image")
    browser = _chromium()
    page = tmp_path / "report.html"
    code, out, err = _run(
        [
            *CONVCHECK,
            *("fuzz", "--revision", "legacy", "--no-torch", "--cases", "512", "--seed", "0"),
            *("--jobs", "2", "--no-minimize", "--corpus", str(tmp_path / "corpus")),
            *("--report", str(page)),
        ],
        timeout=300,
    )
    assert code == 1, err
    shot = tmp_path / "report.png"
    code, _, err = _run(
        [
            browser,
            *("--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"),
            *("--window-size=1280,1400", f"--screenshot={shot}", page.as_uri()),
        ],
        timeout=120,
        cwd=tmp_path,
    )
    assert code == 0 and shot.is_file(), err
    with image.open(shot) as png:
        assert png.size == (1280, 1400)
        pixels = np.asarray(png.convert("RGB"), dtype=np.int16).reshape(-1, 3)
    ink = int((pixels.min(axis=1) < 200).sum())  # text, rules, plot lines
    # The plot's step lines are the only saturated colour on the page.
    colour = int((pixels.max(axis=1) - pixels.min(axis=1) > 80).sum())
    assert ink > 0.02 * len(pixels), "the page is (nearly) blank"
    assert colour > 500, "no plot lines on the page"


def test_the_legacy_demos_report_fits_one_screen_kernel_bugs_first(tmp_path):
    """``make demo`` as a seeded case budget: the legacy kernel's two dozen bugs and torch's
    own fit one screen (``SCREEN_LINES`` of ``SCREEN_COLUMNS``, a longer line counting as
    the lines it wraps to), with every line that says what was found: the kernel's rows,
    each new one of no upstream class with its minimised case under it, then torch in one
    counted line, then where the details are."""
    pytest.importorskip("torch")
    from convcheck.ops.convolution.known_bugs import LEGACY_BUG_CLASSES
    from convcheck.report import SCREEN_COLUMNS, SCREEN_LINES, screen_lines

    code, out, err = _run(
        [
            *CONVCHECK,
            *("fuzz", "--revision", "legacy", "--cases", "8000", "--seed", "1", "--jobs", "2"),
            # Time enough to minimise every finding on a slow machine too: the rows are
            # the minimised cases' bugs.
            *("--minimize-time", "600", "--corpus", str(tmp_path / "corpus")),
        ],
        timeout=1200,
    )
    assert code == 1, err
    lines = out.splitlines()
    assert screen_lines(lines) <= SCREEN_LINES, out
    rows = [i for i, line in enumerate(lines) if re.match(r"  [a-z-]+ ", line)][1:]
    counted = int(re.match(r"(\d+) kernel bugs? ", lines[1]).group(1))
    assert len(rows) == counted > 1, out
    torch = [i for i, line in enumerate(lines) if line.startswith("torch: ")]
    assert len(torch) == 1 and rows[-1] < torch[0], out
    assert not any(lines[i].startswith("  torch-bug") for i in rows)
    assert lines[-1].startswith("details: ") and str(tmp_path / "corpus") in lines[-1]
    # Only the rows are cut to the screen's width; a case is never cut.
    assert all(len(lines[i]) <= SCREEN_COLUMNS for i in rows)
    cases = {i for i, line in enumerate(lines) if line.startswith(" " * 8)}
    look = [i for i in rows if re.search(r"  current: ", lines[i])]  # no upstream class
    upstream = [i for i in rows if any(f"  {name}  " in lines[i] for name in LEGACY_BUG_CLASSES)]
    assert look and upstream and max(upstream) < min(look), out  # the thread's bugs first
    for i in look:  # rows of one call share the case line under the last of them
        assert next(j for j in range(i + 1, len(lines)) if j not in rows) in cases, out


@pytest.mark.skipif(importlib.util.find_spec("atheris") is None, reason="atheris not installed")
def test_the_atheris_engine_shows_progress_and_keeps_libfuzzers_log(tmp_path):
    corpus = tmp_path / "corpus"
    work = tmp_path / "cwd"
    work.mkdir()
    code, out, err = _run(
        [
            *CONVCHECK,
            *("fuzz", "--engine", "atheris", "--revision", "legacy", "--no-torch"),
            *("--cases", "128", "--seed", "1", "--no-minimize", "--corpus", str(corpus)),
        ],
        timeout=300,
        cwd=work,
    )
    # Found or not (from valid seeds, 128 cases seldom find): the progress and the log are
    # what this checks.
    assert code in (0, 1), err
    log = (corpus / "libfuzzer.log").read_text()
    assert "INITED" in log  # libFuzzer's own lines, not convcheck's
    assert list(work.iterdir()) == []  # no slow-unit or crash files where it was started
    lines = err.splitlines()
    assert lines and all(line.startswith("[") and " atheris: " in line for line in lines)
    assert " 128 cases " in lines[-1]


def test_ci_writes_one_page_with_a_section_per_campaign(tmp_path):
    pytest.importorskip("matplotlib")
    page = tmp_path / "ci.html"
    (tmp_path / "corpus").mkdir()
    code, out, err = _run(
        [
            *CONVCHECK,
            *("ci", "--revision", "legacy", "--no-torch", "--cases", "256", "--seed", "0"),
            *("--corpus", str(tmp_path / "corpus"), "--results", str(tmp_path / "results")),
            *("--minimize-time", "0.1", "--report", str(page)),
        ],
        timeout=300,
    )
    assert code == 1, err
    assert out.splitlines()[-1] == f"report: {page}"
    text = page.read_text()
    assert "<h1>convcheck ci on legacy: FAILED</h1>" in text
    campaigns = [line for line in out.splitlines() if line.startswith("campaign ")]
    assert campaigns and all(f"<h1>{escape(line)}</h1>" in text for line in campaigns)
    ran = [line for line in campaigns if "skipped" not in line]
    assert text.count("data:image/png;base64,") == len(ran)
