"""What ExecuTorch 1.5.1's portable convolution does, one row of the table in
shared/reference/executorch-1.5.1-runtime.md per test, as this judge normalises it.

Each test also checks that ``expected_outcome`` (the legacy model, unsanitized) says the
same thing, so a row that changes shows which side moved.
"""

import numpy as np
import pytest
from builders import conv, conv_t, input_strides_past_int32, t

from convcheck.fixedint import INT64_MAX
from convcheck.values import logical_values

pytest.importorskip(
    "executorch", reason="pip install executorch==1.5.1 --no-deps flatbuffers ruamel.yaml tabulate"
)
torch = pytest.importorskip("torch")

from convcheck.ops.convolution.executorch_target import expected_outcome  # noqa: E402
from convcheck.ops.convolution.executorch_target.worker import OVERREAD_KIND  # noqa: E402

OVERREAD = ("crash", OVERREAD_KIND)


def conv2d(**changes):
    """A valid 2-D convolution: input (1, 2, 5, 5), weight (4, 2, 3, 3), bias of 4."""
    base = dict(
        input=t(1, 2, 5, 5),
        weight=t(4, 2, 3, 3),
        out=t(1, 4, 3, 3),
        stride=(1, 1),
        padding=(0, 0),
        dilation=(1, 1),
        output_padding=(0, 0),
    )
    base.update(changes)
    return conv(**base)


def conv_t2d(**changes):
    base = dict(
        input=t(1, 4, 3, 3),
        weight=t(4, 2, 3, 3),
        bias=t(2),
        out=t(1, 2, 5, 5),
        stride=(1, 1),
        padding=(0, 0),
        dilation=(1, 1),
        output_padding=(0, 0),
    )
    base.update(changes)
    return conv_t(**base)


def torch_values(case):
    """aten.convolution on the same deterministic inputs, in float64, logical order."""

    def tensor(spec, role):
        return torch.from_numpy(logical_values(spec, role))

    bias = None if case.bias is None else tensor(case.bias, "bias")
    out = torch.ops.aten.convolution(
        tensor(case.input, "input"),
        tensor(case.weight, "weight"),
        bias,
        list(case.stride),
        list(case.padding),
        list(case.dilation),
        case.transposed,
        list(case.output_padding),
        case.groups,
    )
    return tuple(out.shape), out.reshape(-1).tolist()


def judged(judge, case):
    """The judge's outcome for ``case`` (run entry), checked against expected_outcome."""
    (outcome,) = judge.run([case])
    expected = expected_outcome(case)
    assert expected.agrees(outcome), (
        f"model says {expected.describe()}, ExecuTorch {outcome.describe()} ({outcome.detail})"
    )
    return outcome


def summary(outcome):
    if outcome.verdict == "accept":
        return ("accept", outcome.out_sizes)
    if outcome.verdict == "reject":
        return ("reject", outcome.check)
    return (outcome.verdict, outcome.crash_kind)


VALID = {
    "conv1d": conv(),
    "conv2d": conv2d(),
    "conv2d_channels_last": conv2d(
        input=t(1, 2, 5, 5, order=(0, 2, 3, 1)),
        weight=t(4, 2, 3, 3, order=(0, 2, 3, 1)),
        out=t(1, 4, 3, 3, order=(0, 2, 3, 1)),
        padding=(1, 2),
        stride=(2, 1),
    ),
    "conv2d_groups_no_bias": conv2d(weight=t(4, 1, 3, 3), groups=2, bias=None),
    "conv_transpose1d": conv_t(),
    "conv_transpose2d": conv_t2d(),
    "conv_transpose2d_strided": conv_t2d(stride=(2, 2), padding=(1, 0), output_padding=(1, 0)),
}


@pytest.mark.parametrize("name", sorted(VALID))
def test_valid_convolutions_equal_torch(judge, name):
    case = VALID[name]
    outcome = judged(judge, case)
    sizes, values = torch_values(case)
    assert outcome.verdict == "accept" and outcome.out_sizes == sizes
    np.testing.assert_allclose(outcome.values, values, rtol=1e-6)


def test_check_drops_the_values_run_keeps_them(judge):
    (checked,) = judge.check([conv()])
    (ran,) = judge.run([conv()])
    assert checked.out_sizes == ran.out_sizes == (1, 4, 3)
    assert checked.values is None and len(ran.values) == 12


# name: (case, (verdict, check id / out sizes / crash kind))
ROWS = {
    "groups_zero": (conv(groups=0), ("crash", "SIGFPE")),
    "groups_zero_transposed": (conv_t(groups=0), ("crash", "SIGFPE")),
    "groups_minus_one": (conv(groups=-1), ("reject", "input.channels")),
    # groups * w.size(1) = -2 channels: size(1) is 2^64 - 2 as size_t in the log.
    "groups_minus_one_transposed": (conv_t(groups=-1), ("reject", "output.invalid")),
    "bias_of_2_for_4_channels": (conv(bias=t(2)), OVERREAD),
    "bias_of_1_for_2_channels_transposed": (conv_t(bias=t(1)), OVERREAD),
    "bias_of_0": (conv(bias=t(0)), OVERREAD),
    "bias_of_0_bytes": (conv(bias=t(0, dtype="uint8")), OVERREAD),
    "bias_of_1000": (conv(bias=t(1000)), ("accept", (1, 4, 3))),
    "bias_bool": (conv(bias=t(4, dtype="bool")), ("crash", "SIGSEGV")),
    "input_2_kernel_3_stride_2": (
        conv(input=t(1, 1, 2), weight=t(1, 1, 3), bias=t(1), out=t(1, 1, 1), stride=(2,)),
        ("accept", (1, 1, 1)),
    ),
    "input_2x2_kernel_3_stride_2": (
        conv2d(input=t(1, 2, 2, 2), stride=(2, 2)),
        ("accept", (1, 4, 1, 1)),
    ),
    # d * (k - 1) = 2^63 wraps (silently: no UBSan); torch wraps the same way.
    "dilation_2_62": (conv(dilation=(2**62,)), ("accept", (1, 4, 5))),
    # (5 + 2^41 - 2 - 1) / 1 + 1 cut to 32 bits is 3.
    "padding_2_40": (conv2d(padding=(2**40,)), ("accept", (1, 4, 3, 3))),
    "padding_2_30": (conv(padding=(2**30,)), ("reject", "output.invalid")),
    "input_5d": (
        conv(input=t(1, 2, 5, 5, 5), weight=t(4, 2, 3, 3, 3), out=t(1, 4, 3, 3, 3)),
        ("reject", "rank.input"),
    ),
    "stride_0": (conv(stride=(0,)), ("reject", "stride.range")),
    "stride_minus_1": (conv(stride=(-1,)), ("reject", "stride.range")),
    "int32_weight_float_input": (
        conv(weight=t(4, 2, 3, dtype="int32")),
        ("reject", "dtype.mismatch"),
    ),
    "bool_input": (
        conv(
            input=t(1, 2, 5, dtype="bool"),
            weight=t(4, 2, 3, dtype="bool"),
            out=t(1, 4, 3, dtype="bool"),
            bias=None,
        ),
        ("reject", "dtype.unsupported"),
    ),
    "huge_groups_transposed_bias_check": (
        conv_t(bias=t(1), weight=t(4, 4, 3), groups=INT64_MAX),
        ("reject", "groups.gt_weight0"),
    ),
    # The loops' set-up computes in's strides in int32: 1073741824 * 2 wraps silently (no
    # UBSan), and the empty input is never indexed.
    "input_strides_past_int32": (
        input_strides_past_int32(),
        ("accept", (1, 1, 1, 2)),
    ),
    # Too large to run whole: probed for its checks and out sizes.
    "out_numel_overflow": (
        conv(
            input=t(2**31 - 1, 1, 1, 1),
            weight=t(2**31 - 1, 1, 1, 1),
            bias=None,
            out=t(1, 1, 1, 1),
            padding=(2**30 - 1,),
        ),
        ("reject", "out.resize"),
    ),
    "probe_long_input": (conv(input=t(1, 2, 1 << 28)), ("accept", (1, 4, (1 << 28) - 2))),
    "probe_groups_zero": (conv(input=t(1, 2, 1 << 28), groups=0), ("crash", "SIGFPE")),
    "probe_stride_0": (conv(input=t(1, 2, 1 << 28), stride=(0,)), ("reject", "stride.range")),
}


@pytest.mark.parametrize("name", sorted(ROWS))
def test_behaviour(judge, name):
    case, want = ROWS[name]
    assert summary(judged(judge, case)) == want


def test_bias_of_1000_applies_its_first_4(judge):
    case = conv(bias=t(1000))
    outcome = judged(judge, case)
    _, with_first_4 = torch_values(conv(bias=t(4)))
    assert outcome.values == pytest.approx(with_first_4)


def test_an_overread_names_the_channels_past_the_bias(judge):
    outcome = judged(judge, conv(bias=t(2)))
    assert outcome.crash_site == "bias"
    assert "out channels 2..3" in outcome.detail


def test_a_crash_does_not_lose_the_cases_around_it(judge):
    cases = [conv(), conv(groups=0), conv(stride=(0,)), conv(bias=t(4, dtype="bool")), conv()]
    got = [summary(o) for o in judge.check(cases)]
    assert got == [
        ("accept", (1, 4, 3)),
        ("crash", "SIGFPE"),
        ("reject", "stride.range"),
        ("crash", "SIGSEGV"),
        ("accept", (1, 4, 3)),
    ]
