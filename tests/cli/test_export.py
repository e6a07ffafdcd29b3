"""`convcheck export`: corpus entries as ExecuTorch tests and upstream reports. What the
tests do on a checkout is tested in tests/executorch_source/test_gtest.py."""

import io
import re
from pathlib import Path

import pytest

from convcheck import corpus, registry
from convcheck.cli import main
from convcheck.ops.convolution import upstream

ROOT = Path(__file__).parents[2]
# Export writes convolution's tests and reports (its upstream forms); the pooling ops'
# entries are not exported yet.
KERNEL_ENTRIES = sorted(
    path
    for path in (ROOT / "corpus").glob("*.json")
    if corpus.load(path).case.OP == registry.DEFAULT_OP
)
OUT_STRIDES = ROOT / "corpus/crash-signed-integer-overflow-out-strides-dim-cc7a787d.json"
SIGFPE = ROOT / "corpus/torch/torch-bug-crash-sigfpe-6c08668c.json"


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], out, err)
    return code, out.getvalue(), err.getvalue()


def f32(*sizes):
    return {"sizes": list(sizes), "dtype": "float32"}


def case(**changes):
    fields = {
        "input": f32(1, 2, 5),
        "weight": f32(4, 2, 3),
        "bias": f32(4),
        "out": f32(1, 4, 2),
        "stride": [2],
        "padding": [0],
        "dilation": [1],
        "transposed": False,
        "output_padding": [0],
        "groups": 1,
    }
    fields.update(changes)
    return registry.case_from_json(fields)


def test_one_test_per_kernel_entry_asserting_the_fixed_verdict():
    code, out, _ = run("export", "gtest", *KERNEL_ENTRIES)
    assert code == 0
    names = re.findall(r"TEST_F\(OpConvOutTest, (\w+)\)", out)
    assert names == [upstream.test_name(corpus.load(p).name) for p in KERNEL_ENTRIES]
    # Every entry but the over-strict ones is a call the fixed kernel rejects.
    assert out.count("ET_EXPECT_KERNEL_FAILURE(context_,") == len(KERNEL_ENTRIES) - 1
    assert "/tmp" not in out and str(ROOT) not in out


def test_the_comment_names_the_signature_and_the_first_frame():
    _, out, _ = run("export", "gtest", OUT_STRIDES)
    assert "// convcheck: crash | signed-integer-overflow | out_strides.dim*" in out
    assert "sanitizer's first frame: signed-integer-overflow at step_out_strides" in out


def test_an_accepted_call_asserts_sizes_and_torch_values():
    test = upstream.gtest(case(), "small", "none", None)
    assert "ET_EXPECT_KERNEL_FAILURE" not in test
    assert "EXPECT_EQ(out.size(2), 2);" in test
    # every element 1: each output is 2 channels * 3 taps + the bias
    assert "EXPECT_TENSOR_CLOSE(out, tf_float.make({1, 4, 2}, {7.0, 7.0," in test


def test_channels_last_and_dtypes_come_from_the_factory():
    test = upstream.gtest(
        case(
            input={"sizes": [1, 2, 3, 3], "dim_order": [0, 2, 3, 1], "dtype": "float64"},
            weight={"sizes": [2, 2, 1, 1], "dtype": "float64"},
            bias=None,
            out={"sizes": [1, 2, 3, 3], "dtype": "float64"},
            stride=[1, 1],
            padding=[0, 0],
            dilation=[1, 1],
            output_padding=[0, 0],
        ),
        "cl",
        "none",
        None,
    )
    assert "TensorFactory<ScalarType::Double> tf_double;" in test
    assert "Tensor input = tf_double.full_channels_last({1, 2, 3, 3}, 1);" in test


def test_a_tensor_past_int64_elements_is_a_tensor_impl_given_its_sizes_after():
    huge = 2**31 - 1
    test = upstream.gtest(case(input=f32(huge, huge, huge), stride=[-1]), "huge", "none", None)
    assert "executorch::aten::SizesType input_sizes[] = {0, 0, 0};" in test
    assert "std::copy(std::begin(input_real), std::end(input_real), input_sizes);" in test
    assert "int64_t stride[] = {-1};" in test


def test_the_issue_names_the_class_the_fix_and_holds_the_test():
    code, out, _ = run("export", "issue", OUT_STRIDES)
    assert code == 0
    assert out.startswith("# `convolution_out`: out strides past int32\n")
    assert "`output.stride_too_large`" in out and "| 17 | `out_strides` |" in out
    assert "## What torch does with the same call" in out
    assert "TEST_F(OpConvOutTest, CrashSignedIntegerOverflowOutStridesDimCc7a787d)" in out


def test_torchs_own_bug_is_reported_as_a_script_with_and_without_onednn():
    code, out, _ = run("export", "issue", SIGFPE)
    assert code == 0
    assert "SIGFPE" in out.splitlines()[0]
    assert "with torch.backends.mkldnn.flags(enabled=False):" in out
    assert "[9223372036854775806]" in out


@pytest.mark.parametrize(
    "argv",
    [
        ("export", "issue", OUT_STRIDES, SIGFPE),
        ("export", "gtest", OUT_STRIDES, "--op", "nonesuch"),
        ("export", "gtest", "missing.json"),
    ],
)
def test_usage_errors_exit_2(argv):
    code, _, err = run(*argv)
    assert code == 2 and err
