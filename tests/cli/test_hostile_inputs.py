"""Hostile input: whatever file, file name or folder a user hands convcheck, the answer is
exit 2 and ONE line on stderr naming the file (or field) and the value: never a traceback
(whose exit 1 would read as "findings"), never a hang, never a finding lost.

Like Hypothesis's invalid-argument tests: a table of inputs that must be refused, each
run through ``main`` (and a few through the real executable, where stdout and stderr are
real byte streams and a hang is a timeout)."""

import errno
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from builders import conv, t

from convcheck.cli import main

# The installed script when there is one (its streams are real byte streams), else -m.
SCRIPT = shutil.which("convcheck", path=os.path.dirname(sys.executable))
CONVCHECK = [SCRIPT] if SCRIPT else [sys.executable, "-m", "convcheck"]


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main([os.fsdecode(a) if isinstance(a, bytes) else str(a) for a in argv], out, err)
    return code, out.getvalue(), err.getvalue()


def run_executable(*argv, timeout=60):
    """The installed command in a child: a hang fails the test instead of blocking it."""
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).parents[2]))
    done = subprocess.run(
        [*CONVCHECK, *argv], capture_output=True, timeout=timeout, env=env, check=False
    )
    return done.returncode, done.stdout, done.stderr.decode("utf-8", "replace")


def assert_one_clear_line(code, err, *needles):
    assert code == 2, err[:2000]
    assert err.endswith("\n") and err.count("\n") == 1, err[:2000]
    assert "Traceback" not in err and "internal error" not in err, err[:2000]
    assert len(err) < 500, f"{len(err)} characters: {err[:300]}..."
    for needle in needles:
        assert needle in err, err


def case_text(path=(), value=None):
    """A valid case as JSON text, with the field at ``path`` replaced by raw JSON text."""
    data = conv(bias=t(4)).to_json()
    if not path:
        return json.dumps(data).encode()
    marker = "@@HOSTILE@@"
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = marker
    return json.dumps(data).replace(f'"{marker}"', value).encode()


def entry_text(case=None, **fields):
    data = {
        "format": 1,
        "name": "crash-division-by-zero-00000000",
        "kind": "crash",
        "signature": ["crash", "division-by-zero", "groups.weight0_rem"],
        "revision": "legacy",
        "target": None,
        "explanation": "native crash",
        "case": json.loads(case or case_text()),
    }
    for name, value in fields.items():
        if value is KeyError:
            del data[name]
        else:
            data[name] = value
    return json.dumps(data).encode()


# (id, bytes of the file, what the one line must say)
HOSTILE_FILES = [
    ("not-utf8", b'{"input": "\xff\xfe"}', "not UTF-8 (byte 0xff at offset"),
    ("latin1-dtype", case_text(("input", "dtype"), '"float32"').replace(b"32", b"\xe9"), "UTF-8"),
    ("empty", b"", "not JSON"),
    ("nul-bytes", b"\0" * 64, "not JSON"),
    ("nested-arrays", b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    ("nested-objects", b'{"a":' * 100_000 + b"1" + b"}" * 100_000, "nested too deeply"),
    ("5000-digit-groups", case_text(("groups",), "1" * 5000), "more than 4300 digits"),
    ("4000-digit-groups", case_text(("groups",), "9" * 4000), "groups: expected an int64"),
    ("dtype-list", case_text(("input", "dtype"), '["float32"]'), "input.dtype"),
    ("dtype-object", case_text(("out", "dtype"), '{"a": 1}'), "out.dtype"),
    ("dtype-surrogate", case_text(("out", "dtype"), '"\\udc80"'), "out.dtype"),
    ("key-surrogate", case_text(("input", "\ud800"), "1"), "unknown field"),
    ("sizes-string", case_text(("input", "sizes"), '"1, 2, 5"'), "input.sizes"),
    ("sizes-float", case_text(("input", "sizes"), "[1, 2.0, 5]"), "input.sizes[1]"),
    ("sizes-100k", case_text(("input", "sizes"), json.dumps([1] * 100_000)), "input.sizes"),
    ("size-huge", case_text(("weight", "sizes"), f"[4, 2, {10**4000}]"), "weight.sizes[2]"),
    ("groups-nan", case_text(("groups",), "NaN"), "groups: expected an int64, got nan"),
    ("stride-inf", case_text(("stride",), "[Infinity]"), "stride[0]"),
    ("order-huge", case_text(("input", "dim_order"), f"[0, 1, {10**300}]"), "input.dim_order"),
    ("bias-number", case_text(("bias",), "7"), "bias: expected a JSON object, got 7"),
    (
        "bias-order-reversed",
        case_text(("bias",), '{"sizes": [4, 1], "dtype": "float32", "dim_order": [1, 0]}'),
        "bias.dim_order",
    ),
    ("array", b"[1, 2, 3]", "expected a JSON object"),
    ("50mb-sizes", b'{"input": {"sizes": [' + b"1, " * 17_000_000 + b"1]}}", "larger than"),
]


@pytest.mark.parametrize(
    "content, message", [c[1:] for c in HOSTILE_FILES], ids=[c[0] for c in HOSTILE_FILES]
)
def test_a_hostile_case_file_is_one_clear_line(tmp_path, content, message):
    path = tmp_path / "case.json"
    path.write_bytes(content)
    code, out, err = run("explain", path)
    assert_one_clear_line(code, err, message, str(path))
    assert out == ""


# Every hostile file but the 50 MB one, as the corpus and merge tests take them.
hostile_small_files = pytest.mark.parametrize(
    "content, message",
    [c[1:] for c in HOSTILE_FILES if c[0] != "50mb-sizes"],
    ids=[c[0] for c in HOSTILE_FILES if c[0] != "50mb-sizes"],
)


@hostile_small_files
def test_a_hostile_corpus_file_is_one_clear_line(tmp_path, content, message):
    """The same bytes as a whole corpus entry, and as the case inside one."""
    (tmp_path / "whole.json").write_bytes(content)
    code, _, err = run("replay", tmp_path, "--no-torch")
    assert_one_clear_line(code, err, "corpus file", "whole.json")
    (tmp_path / "whole.json").unlink()
    envelope = entry_text(case=b"{}").replace(b'"case": {}', b'"case": ' + content)
    (tmp_path / "inner.json").write_bytes(envelope)
    code, _, err = run("replay", tmp_path, "--no-torch")
    assert_one_clear_line(code, err, "corpus file", "inner.json", message.replace("case.", ""))


HOSTILE_ENTRIES = [
    ("name-null", {"name": None}, "name"),
    ("name-surrogate", {"name": "crash-\ud800"}, "name"),
    ("name-path", {"name": "../../escape"}, "name '../../escape'"),
    ("name-long", {"name": "a" * 5000}, "name"),
    ("format-unknown", {"format": 99}, "format 99 is unknown"),
    ("format-missing", {"format": KeyError}, "'format' is missing"),
    ("revision-unknown", {"revision": "nightly"}, "revision 'nightly' is unknown"),
    ("revision-list", {"revision": ["legacy"]}, "revision ['legacy'] is unknown"),
    ("kind-list", {"kind": ["crash"]}, "kind ['crash'] is unknown"),
    ("target-number", {"target": 5}, "target"),
    ("signature-empty", {"signature": []}, "signature"),
    ("signature-surrogate", {"signature": ["crash", "\udcff"]}, "signature"),
    ("explanation-object", {"explanation": {}}, "explanation"),
    ("explanation-surrogate", {"explanation": "\ud800"}, "explanation"),
    ("outcomes-list", {"outcomes": []}, "outcomes must be"),
    ("outcomes-text", {"outcomes": "accept"}, "outcomes must be"),
    ("outcome-number", {"outcomes": {"native": 5}}, "outcomes.native must be"),
    ("outcome-verdict", {"outcomes": {"native": {"verdict": "maybe"}}}, "outcomes.native.verdict"),
    ("outcome-no-verdict", {"outcomes": {"native": {"check": None}}}, "outcomes.native.verdict"),
    ("outcome-check", {"outcomes": {"native": {"verdict": "reject", "check": 3}}}, ".check"),
    ("outcome-sizes", {"outcomes": {"model": {"verdict": "accept", "out_sizes": "1"}}}, "sizes"),
    ("outcome-size", {"outcomes": {"model": {"verdict": "accept", "out_sizes": [1.5]}}}, "sizes"),
    ("outcome-crash", {"outcomes": {"native": {"verdict": "crash", "crash": []}}}, ".crash"),
    (
        "outcome-crash-kind",
        {"outcomes": {"native": {"verdict": "crash", "crash": {"kind": 7}}}},
        "outcomes.native.crash.kind",
    ),
    ("torch-version-number", {"torch_version": 2.13}, "torch_version"),
    ("torch-version-list", {"torch_version": ["2.13.0"]}, "torch_version"),
    ("found-by-number", {"found_by": 1}, "found_by"),
    ("found-by-object", {"found_by": {}}, "found_by"),
    ("minimized-text", {"minimized": "yes"}, "minimized"),
]


@pytest.mark.parametrize(
    "fields, message", [c[1:] for c in HOSTILE_ENTRIES], ids=[c[0] for c in HOSTILE_ENTRIES]
)
def test_a_hostile_corpus_entry_is_one_clear_line(tmp_path, fields, message):
    (tmp_path / "entry.json").write_bytes(entry_text(**fields))
    code, out, err = run("replay", tmp_path, "--no-torch")
    assert_one_clear_line(code, err, "entry.json", message)


@pytest.mark.parametrize(
    "fields, message", [c[1:] for c in HOSTILE_ENTRIES], ids=[c[0] for c in HOSTILE_ENTRIES]
)
def test_a_hostile_entry_is_refused_by_merge_before_anything_is_written(tmp_path, fields, message):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "entry.json").write_bytes(entry_text(**fields))
    code, out, err = run("merge", tmp_path / "out", tmp_path / "in", "--no-torch")
    assert_one_clear_line(code, err, "entry.json", message)
    assert not (tmp_path / "out").exists()


@hostile_small_files
def test_a_hostile_seed_case_is_refused_by_merge(tmp_path, content, message):
    (tmp_path / "seed.case").write_bytes(content)
    code, _, err = run("merge", tmp_path / "out", tmp_path, "--no-torch")
    assert_one_clear_line(code, err, "seed.case", message)


def test_a_hostile_entry_is_refused_by_fuzz_before_the_campaign(tmp_path):
    (tmp_path / "entry.json").write_bytes(entry_text(revision="nightly"))
    code, _, err = run("fuzz", "--no-torch", "--corpus", tmp_path, "--cases", 1)
    assert_one_clear_line(code, err, "entry.json", "revision 'nightly' is unknown")


@pytest.mark.parametrize("name", ["/dev/zero", "/dev/null", "/proc", "/"])
def test_what_is_not_a_regular_file_is_refused(name):
    code, _, err = run("explain", name)
    assert_one_clear_line(code, err, name, "not a regular file")


def test_missing_and_unreadable_names(tmp_path):
    code, _, err = run("explain", tmp_path / "nope.json")
    assert_one_clear_line(code, err, "nope.json", "No such file or directory")
    code, _, err = run("judge", "", "--no-torch")
    assert_one_clear_line(code, err, "case file")
    code, _, err = run("explain", "x\0y.json")
    assert_one_clear_line(code, err, "case file")


def test_a_fifo_case_does_not_hang(tmp_path):
    fifo = tmp_path / "case.json"
    os.mkfifo(fifo)
    code, out, err = run_executable("explain", str(fifo))
    assert_one_clear_line(code, err, "case.json", "not a regular file")


def test_a_fifo_in_the_corpus_does_not_hang(tmp_path):
    os.mkfifo(tmp_path / "x.json")
    code, out, err = run_executable("replay", str(tmp_path), "--no-torch")
    assert_one_clear_line(code, err, "x.json", "not a regular file")


def test_a_fifo_among_merged_inputs_does_not_hang(tmp_path):
    os.mkfifo(tmp_path / "0123abcd")
    code, out, err = run_executable("merge", str(tmp_path / "out"), str(tmp_path), "--no-torch")
    assert_one_clear_line(code, err, "0123abcd", "not a regular file")


def test_links_to_devices_and_loops(tmp_path):
    (tmp_path / "zero.json").symlink_to("/dev/zero")
    code, _, err = run("replay", tmp_path, "--no-torch")
    assert_one_clear_line(code, err, "zero.json", "not a regular file")
    (tmp_path / "loop.json").symlink_to(tmp_path / "loop.json")
    code, _, err = run("explain", tmp_path / "loop.json")
    assert_one_clear_line(code, err, "loop.json", "Too many levels of symbolic links")
    code, _, err = run("explain", tmp_path / ("x" * 300 + ".json"))
    assert_one_clear_line(code, err, "File name too long")


def test_a_folder_named_like_an_entry_is_refused(tmp_path):
    (tmp_path / "x.json").mkdir()
    code, _, err = run("replay", tmp_path, "--no-torch")
    assert_one_clear_line(code, err, "x.json", "not a regular file")


def test_a_file_name_that_is_not_utf8(tmp_path):
    """Linux file names are bytes: shown with the odd byte escaped, on stdout and stderr."""
    bad = tmp_path / os.fsdecode(b"case-\xff.json")
    bad.write_bytes(b"{")
    code, _, err = run("explain", bad)
    assert_one_clear_line(code, err, "case-\\xff.json", "not JSON")
    code, _, err = run_executable("explain", os.fsencode(bad))
    assert_one_clear_line(code, err, "case-\\xff.json", "not JSON")
    bad.write_bytes(case_text())
    code, out, err = run_executable("explain", os.fsencode(bad))
    assert (code, err) == (0, "")
    assert b"== " + os.fsencode(tmp_path) + b"/case-\\xff.json" in out


def test_a_hostile_file_through_the_executable_is_one_line(tmp_path):
    for name, content, message in HOSTILE_FILES:
        if name in ("nested-arrays", "5000-digit-groups", "key-surrogate", "50mb-sizes"):
            (tmp_path / f"{name}.json").write_bytes(content)
            code, out, err = run_executable("explain", str(tmp_path / f"{name}.json"))
            assert_one_clear_line(code, err, message)


def test_a_corpus_entry_with_an_odd_file_name_replays(tmp_path):
    (tmp_path / os.fsdecode(b"\xfe.json")).write_bytes(entry_text())
    code, out, err = run_executable("replay", str(tmp_path), "--revision", "current", "--no-torch")
    assert (code, err) == (0, ""), err
    assert b"1 entry, 1 passed, 0 failed" in out


def test_an_entry_a_concurrent_campaign_removed_is_skipped(tmp_path, monkeypatch):
    """A minimising campaign removes merged entries: one gone between the listing and
    the reading is no longer part of the corpus, not an error."""
    from convcheck import files

    (tmp_path / "entry.json").write_bytes(entry_text())
    listed = files.json_names
    monkeypatch.setattr(files, "json_names", lambda *a: [*listed(*a), "merged-away.json"])
    code, out, err = run("replay", tmp_path, "--revision", "current", "--no-torch")
    assert (code, err) == (0, ""), err
    assert "1 entry, 1 passed, 0 failed" in out
    # A file the user names is still an error when it is not there.
    code, _, err = run("judge", tmp_path / "merged-away.json", "--no-torch")
    assert_one_clear_line(code, err, "merged-away.json", "No such file")


@pytest.mark.parametrize("kind", ["device", "folder", "fifo", "missing"])
def test_a_target_that_is_no_file_says_what_it_is(tmp_path, kind):
    target = {"device": "/dev/zero", "folder": tmp_path, "fifo": tmp_path / "fifo"}.get(
        kind, tmp_path / "missing.so"
    )
    if kind == "fifo":
        os.mkfifo(target)
    said = {"device": "not a regular file", "folder": "is a folder", "fifo": "not a regular file"}
    (tmp_path / "case.json").write_bytes(case_text())
    code, _, err = run("judge", "--no-torch", "--target", target, tmp_path / "case.json")
    assert_one_clear_line(code, err, f"target {target}: {said.get(kind, 'no such file')}")


def test_a_target_whose_name_is_null_is_one_clear_line(tmp_path):
    from hostile import build

    target = build(tmp_path, "NULL_NAME")
    (tmp_path / "case.json").write_bytes(case_text())
    code, _, err = run("judge", "--no-torch", "--target", target, tmp_path / "case.json")
    assert_one_clear_line(code, err, f"target {target}: convcheck_name() returned NULL")
    assert "AttributeError" not in err


def test_a_file_size_limit_of_zero_is_named_not_a_bug_in_convcheck(tmp_path):
    import resource

    def no_files():
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))

    env = dict(os.environ, PYTHONPATH=str(Path(__file__).parents[2]))
    done = subprocess.run(
        [*CONVCHECK, "fuzz", "--no-torch", "--cases", "8", "--corpus", str(tmp_path / "c")],
        capture_output=True, timeout=300, env=env, preexec_fn=no_files, check=False,
    )  # fmt: skip
    err = done.stderr.decode()
    assert_one_clear_line(done.returncode, err, "file size limit (ulimit -f) is 0 bytes")


def test_a_concurrent_writers_temporaries_are_skipped(tmp_path):
    (tmp_path / "entry.json").write_bytes(entry_text())
    (tmp_path / ".tmp-k2j4l1.json").write_bytes(entry_text()[:40])
    code, out, err = run("replay", tmp_path, "--revision", "current", "--no-torch")
    assert (code, err) == (0, ""), err
    assert "1 entry, 1 passed" in out


def test_ci_with_a_corpus_that_does_not_exist(tmp_path):
    code, _, err = run("ci", "--no-torch", "--corpus", tmp_path / "nope", "--results", tmp_path)
    assert_one_clear_line(code, err, "nope", "does not exist")
    assert list(tmp_path.iterdir()) == []


# -- writing ---------------------------------------------------------------------------


def test_corpus_or_results_naming_a_file(tmp_path):
    a_file = tmp_path / "file"
    a_file.write_text("mine")
    code, _, err = run("fuzz", "--no-torch", "--corpus", a_file, "--cases", 1)
    assert_one_clear_line(code, err, str(a_file), "not a folder")
    code, _, err = run("ci", "--no-torch", "--corpus", tmp_path, "--results", a_file)
    assert_one_clear_line(code, err, str(a_file), "not a folder")
    code, _, err = run("fuzz", "--no-torch", "--corpus", a_file / "below", "--cases", 1)
    assert_one_clear_line(code, err, str(a_file))
    assert a_file.read_text() == "mine"


def test_a_folder_no_one_may_write(tmp_path):
    """/sys refuses new files even to root; a chmod-ed folder only to other users."""
    code, _, err = run("fuzz", "--no-torch", "--corpus", "/sys/convcheck", "--cases", 1)
    assert_one_clear_line(code, err, "/sys/convcheck")
    if os.geteuid() != 0:
        tmp_path.chmod(0o500)
        try:
            code, _, err = run("fuzz", "--no-torch", "--corpus", tmp_path, "--cases", 1)
            assert_one_clear_line(code, err, str(tmp_path), "Permission denied")
        finally:
            tmp_path.chmod(0o700)


def test_a_full_disk_mid_campaign_keeps_what_was_written(tmp_path, monkeypatch):
    """ENOSPC from the third entry on: exit 2, one line, the two first entries whole."""
    real_fsync, calls = os.fsync, []

    def fsync(fd):
        # Only the corpus' files count: a cold cache also writes the solver's seeds.
        path = os.readlink(f"/proc/self/fd/{fd}")
        if path.startswith(f"{tmp_path}/") and not os.path.isdir(path):
            calls.append(fd)
            if len(calls) >= 3:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    code, out, err = run("fuzz", "--no-torch", "--corpus", tmp_path, "--cases", 2048, "--seed", 0)
    # A slow machine's log may show where the campaign stood: the error is the one line after.
    err = re.sub(r"(?m)^\[ *[\d.]+s\] .*\n", "", err)
    assert_one_clear_line(code, err, str(tmp_path), "No space left on device")
    names = sorted(p.name for p in tmp_path.iterdir())
    assert len(names) == 2 and not any(n.startswith(".") for n in names), names
    from convcheck import corpus

    assert len(corpus.load_all(tmp_path)) == 2


def test_ci_results_are_replaced_whole_or_not_at_all(tmp_path, monkeypatch):
    """A full disk while writing junit.xml leaves the previous file, not half of one."""
    from convcheck import ci
    from convcheck.errors import ConvcheckError

    result = ci.CiResult(replayed=[], campaigns=[ci.CampaignResult("random", 1.0, 256)])
    ci.write_results(tmp_path, result)
    before = {p.name: p.read_text() for p in tmp_path.iterdir()}
    assert sorted(before) == ["junit.xml", "results.sarif"]

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    result.campaigns[0].cases = 512
    with pytest.raises(ConvcheckError, match="cannot write junit.xml: No space left on device"):
        ci.write_results(tmp_path, result)
    assert {p.name: p.read_text() for p in tmp_path.iterdir()} == before


def test_a_bug_in_convcheck_is_one_line_and_exit_2_not_findings(monkeypatch):
    """An uncaught exception would exit 1, which reads as "findings"."""
    from convcheck import cli

    def broken(args, stdout, stderr):
        raise KeyError("a\nmultiline\nmessage")

    monkeypatch.setattr(cli, "cmd_build", broken)
    code, _, err = run("build")
    assert code == 2 and err.count("\n") == 1, err
    assert err.startswith("convcheck: internal error (a bug in convcheck): KeyError: ")
    saved = Path(err.rsplit("traceback in ", 1)[1].strip())
    try:
        assert "Traceback" in saved.read_text() and "in broken" in saved.read_text()
    finally:
        saved.unlink()
