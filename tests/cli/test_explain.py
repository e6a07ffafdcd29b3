"""convcheck explain: the trace, the JSON form, and clear errors for bad input."""

import io
import json

from convcheck.cli import main
from convcheck.commands import example_paths


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def example(name):
    return next(str(p) for p in example_paths() if p.stem == name)


def test_trace_marks_the_overflow_and_the_ordering():
    code, out, _ = run(
        "explain", "--revision", "legacy", example("groups_overflow_before_validation")
    )
    assert code == 1
    assert "bias_shape.groups_mul" in out
    assert "9223372036854775807 * 4 = -4   <-- UB: signed-integer-overflow" in out
    assert "verdict: reject groups.gt_weight0" in out
    assert "finding: ordering" in out


def test_json_names_ub_and_narrowing():
    code, out, _ = run("explain", "--revision", "legacy", "--json", example("huge_padding"))
    data = json.loads(out)
    assert data["verdict"] == "accept" and data["out_sizes"] == [1, 4, 3]
    assert data["narrowing"][0]["site"] == "output_sizes.dim0.narrow"
    assert data["ub"] == []


def test_current_rejects_cleanly():
    code, out, _ = run("explain", "--json", example("groups_zero"))
    assert code == 0
    data = json.loads(out)
    assert (data["verdict"], data["check"], data["ub"]) == ("reject", "groups.nonpos", [])


def test_every_bundled_example_explains(tmp_path):
    code, out, err = run("explain", "--revision", "legacy")
    assert code == 1 and err == ""
    assert out.count("== ") == len(example_paths())


def test_bad_case_file_is_one_line_and_exit_2(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"input": 3}')
    code, out, err = run("explain", str(bad))
    assert code == 2
    assert err == f"convcheck: case file {bad}: input: expected a JSON object, got 3\n"


def test_missing_file_and_bad_flag(tmp_path):
    assert run("explain", str(tmp_path / "nope.json"))[2].startswith("convcheck: case file")
    code, _, err = run("explain", "--revision", "future")
    assert code == 2 and "invalid choice: 'future'" in err
    assert len(err.splitlines()) == 1


def test_explain_and_the_signature_name_the_same_overflow_site(tmp_path):
    """A transposed size wraps as unsigned (no UB, no narrowing event): the site is still
    the multiplication by the stride, in the trace and in the finding's signature."""
    from builders import conv_t

    from convcheck import model
    from convcheck.findings import findings
    from convcheck.judgement import Judgement

    case = conv_t(stride=(2**62,))
    path = tmp_path / "case.json"
    path.write_text(case.dumps())
    code, out, _ = run("explain", "--revision", "legacy", str(path))
    assert code == 1
    assert "finding: overflow at output_sizes.dim0.times_stride:" in out
    wrapped, exact, found = model.classify(case, "legacy")
    signatures = [f.signature for f in findings(Judgement(case, "legacy", wrapped, exact, found))]
    assert signatures == [("overflow", "output_sizes.dim*.times_stride")]
