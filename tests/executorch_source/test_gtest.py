"""Exported GoogleTests on a user's ExecuTorch checkout (`convcheck target executorch
--source DIR --gtest FILE`): compiled sanitized with the source target's translation units
and the system's GoogleTest. Needs a legacy checkout (CONVCHECK_EXECUTORCH_SRC), skipped
otherwise; building the tests takes about a minute on two cores."""

import io
import os
from pathlib import Path

import pytest

from convcheck import corpus, registry
from convcheck.cli import main
from convcheck.export import gtest_file
from convcheck.ops.convolution import upstream

SOURCE = os.environ.get("CONVCHECK_EXECUTORCH_SRC")
pytestmark = pytest.mark.skipif(
    not SOURCE, reason="needs an ExecuTorch checkout: set CONVCHECK_EXECUTORCH_SRC to its root"
)
CORPUS = Path(__file__).resolve().parents[2] / "corpus"
INT32_STRIDES = [
    CORPUS / "crash-signed-integer-overflow-out-strides-dim-cc7a787d.json",
    CORPUS / "crash-signed-integer-overflow-wrapper-strides-input-dim-358c9839.json",
]
# A call both kernels accept, channels-last, small enough for values: its test passes.
CHANNELS_LAST = [0, 2, 3, 1]
VALID = dict(
    input={"sizes": [1, 2, 3, 3], "dim_order": CHANNELS_LAST, "dtype": "float32"},
    weight={"sizes": [2, 2, 2, 2], "dtype": "float32"},
    bias={"sizes": [2], "dtype": "float32"},
    out={"sizes": [1, 2, 2, 2], "dim_order": CHANNELS_LAST, "dtype": "float32"},
    stride=[1, 1],
    padding=[0, 0],
    dilation=[1, 1],
    transposed=False,
    output_padding=[0, 0],
    groups=1,
)


def test_the_int32_stride_tests_fail_by_a_sanitizer_report_and_a_valid_call_passes(tmp_path):
    tests = tmp_path / "tests.cpp"
    valid = upstream.gtest(registry.case_from_json(VALID), "valid", "none", None)
    tests.write_text(gtest_file([corpus.load(p) for p in INT32_STRIDES]) + valid)
    out, err = io.StringIO(), io.StringIO()
    code = main(["target", "executorch", "--source", SOURCE, "--gtest", str(tests)], out, err)
    lines = out.getvalue().splitlines()
    assert code == 1, (lines, err.getvalue())
    for line in lines[:2]:
        assert line.startswith("FAIL") and "sanitizer:" in line, lines
        assert "dim_order_util.h:147" in line and "runtime error: signed integer overflow" in line
    assert lines[2] == "PASS  OpConvOutTest.Valid"
    assert lines[3] == "3 tests, 2 failed"
