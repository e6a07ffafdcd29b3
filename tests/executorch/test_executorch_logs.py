"""The table from ExecuTorch's log lines to convcheck's check ids (``logs.PATTERNS``).

Each entry is the log ExecuTorch 1.5.1 printed for a call that fails that check (the
``method.cpp`` lines after them left out), recorded from the pip build. Needs no
executorch: it reads text.
"""

import re
from pathlib import Path

import pytest

from convcheck.ops.convolution.executorch_target import logs

CALL = (
    "[op_convolution.cpp:363] Check failed (check_convolution_args( in, weight, bias, stride, "
    "padding, dilation, transposed, output_padding, groups, out)): \n"
    "[method.cpp:1483] KernelCall failed at instruction 0:0 in operator aten::convolution.out: "
    "0x12\n"
)
ORDER_DUMP = (
    "[tensor_util_portable.cpp:64] Expected tensor to have default or channels last dim order, "
    "but got\n"
    "[tensor_util_portable.cpp:68]     dim_order(0): 0\n"
    "[tensor_util_portable.cpp:68]     dim_order(1): 2\n"
    "[tensor_util_portable.cpp:68]     dim_order(2): 1\n"
)
RANGE = (
    "[kernel_ops_util.cpp:53] Expected array[0] > 1, found 0\n"
    "[kernel_ops_util.cpp:44] Check failed (int_array_all_ge(array, min_val)): \n"
)
OP_PARAM = (
    '[kernel_ops_util.cpp:119] Check failed (param_array_is_valid( "output_padding", '
    "output_padding, 0, kernel_ndim, false)): \n"
)
OP_VALID = (
    "[kernel_ops_util.cpp:427] Check failed (output_padding_is_valid(output_padding, stride, "
    "dilation, kernel_ndim)): \n"
)
RANK = (
    "[tensor_util.h:618] Check failed (static_cast<size_t>(t.dim()) == rank): Expected "
    "tensor.dim() to be 3, but got 2\n"
)


def length(name):
    return (
        "[kernel_ops_util.cpp:37] Check failed (size == 1 || size == length): "
        f"Expected {name} to have size 1 or 1 but got 2\n"
    )


RECORDED = {
    "dtype.mismatch": (
        "[tensor_util.h:608] Check failed (a.scalar_type() == b.scalar_type() && "
        "b.scalar_type() == c.scalar_type()): Tensors do not match: dtype={Float, Int, Float}\n"
        "[kernel_ops_util.cpp:382] Check failed (tensors_have_same_dtype(in, weight, out)): \n"
        + CALL
    ),
    "dim_order.input": ORDER_DUMP
    + "[kernel_ops_util.cpp:384] Check failed (tensor_is_default_or_channels_last_dim_order"
    "(in)): \n" + CALL,
    "dim_order.weight": ORDER_DUMP
    + "[kernel_ops_util.cpp:389] Check failed (tensor_is_default_or_channels_last_dim_order"
    "(weight)): \n" + CALL,
    "dim_order.out": ORDER_DUMP
    + "[kernel_ops_util.cpp:392] Check failed (tensor_is_default_or_channels_last_dim_order"
    "(out)): \n" + CALL,
    "rank.input": "[kernel_ops_util.cpp:394] Check failed (in.dim() == 3 || in.dim() == 4): "
    "Expect input tensor to be 3-D or 4-D, but got, 5.\n" + CALL,
    "rank.weight": RANK
    + "[kernel_ops_util.cpp:398] Check failed (tensor_is_rank(weight, in.dim())): \n"
    + CALL,
    "rank.out": RANK
    + "[kernel_ops_util.cpp:399] Check failed (tensor_is_rank(out, in.dim())): \n"
    + CALL,
    "bias.rank": RANK
    + "[kernel_ops_util.cpp:402] Check failed (tensor_is_rank(bias.value(), 1)): \n"
    + CALL,
    "bias.length": "[kernel_ops_util.cpp:403] Check failed (bias.value().size(0) == transposed "
    "? groups * weight.size(1) : weight.size(0)): bias length must equal number of output "
    "channels, but got 1; expected 0\n" + CALL,
    "stride.length": length("stride")
    + "[kernel_ops_util.cpp:421] Check failed (stride_is_valid(stride, kernel_ndim, false)): \n"
    + CALL,
    "stride.range": RANGE
    + "[kernel_ops_util.cpp:421] Check failed (stride_is_valid(stride, kernel_ndim, false)): \n"
    + CALL,
    "padding.length": length("padding")
    + "[kernel_ops_util.cpp:423] Check failed (padding_is_valid(padding, {kernel_size, "
    "kernel_ndim}, kernel_ndim)): \n" + CALL,
    "padding.range": RANGE
    + "[kernel_ops_util.cpp:423] Check failed (padding_is_valid(padding, {kernel_size, "
    "kernel_ndim}, kernel_ndim)): \n" + CALL,
    "dilation.length": length("dilation")
    + "[kernel_ops_util.cpp:425] Check failed (dilation_is_valid(dilation, kernel_ndim)): \n"
    + CALL,
    "dilation.range": RANGE
    + "[kernel_ops_util.cpp:425] Check failed (dilation_is_valid(dilation, kernel_ndim)): \n"
    + CALL,
    "output_padding.length": length("output_padding") + OP_PARAM + OP_VALID + CALL,
    "output_padding.range": RANGE + OP_PARAM + OP_VALID + CALL,
    "output_padding.too_large": "[kernel_ops_util.cpp:130] Check failed (op_i < s_i || op_i < "
    "d_i): output padding must be smaller than either stride or dilation\n" + OP_VALID + CALL,
    "groups.gt_weight0": "[kernel_ops_util.cpp:431] Check failed (weight.size(0) >= groups): "
    "Given groups=5, expected weight to be at least 5 at dimension 0, but got weight.size(0) "
    "= 4 instead\n" + CALL,
    "groups.not_div_weight0": "[kernel_ops_util.cpp:438] Check failed (weight.size(0) % groups "
    "== 0): Given groups=3, expected weight to be divisible by 3 at dimension 0, but got "
    "weight.size(0) = 4 instead\n" + CALL,
    "input.channels": "[kernel_ops_util.cpp:447] Check failed (in.size(1) == groups * "
    "weight.size(1)): Given groups=-1 and weight.size(1) = 2, expected input to have -2 "
    "channels, but got 2\n" + CALL,
    "dim_order.in_out": "[tensor_util_portable.cpp:130] Check failed (all_contiguous || "
    "all_channels_last): 2 input tensors have different dim orders\n"
    "[op_convolution.cpp:379] Check failed (tensors_have_same_dim_order(in, out)): \n",
    "output.invalid": "[kernel_ops_util.cpp:153] The provided combination of input and kernel "
    "parameters produces an invalid output size:\n"
    "[kernel_ops_util.cpp:158]     size(0): 1\n"
    "[kernel_ops_util.cpp:158]     size(1): 4\n"
    "[kernel_ops_util.cpp:158]     size(2): 18446744071562067971\n"
    "[op_convolution.cpp:396] Check failed (output_size_is_valid({output_sizes, output_ndim}, "
    "in.dim() - 2)): \n",
    "out.resize": "[tensor_impl.cpp:63] Overflow computing numel at dimension 2\n"
    "[op_convolution.cpp:402] Check failed (resize_tensor(out, {output_sizes, output_ndim}) == "
    "Error::Ok): \n",
    "dtype.unsupported": "[op_convolution.cpp:415] Unhandled dtype Bool for convolution.out\n",
}
TRANSPOSED_CHANNELS = (
    "[kernel_ops_util.cpp:457] Check failed (in.size(1) == weight.size(0)): input channels "
    "must match weight.size(0) in transposed convolution; in.size(1) = 3, weight.size(0) = 4\n"
    + CALL
)
# Every check id of the legacy revision (docs/checks.md) has a pattern.
LEGACY_CHECKS = sorted(RECORDED)


@pytest.mark.parametrize("check", LEGACY_CHECKS)
def test_a_recorded_log_gives_its_check(check):
    verdict = logs.classify(RECORDED[check])
    assert (verdict.kind, verdict.check) == ("reject", check)
    assert verdict.line.startswith("[")


def test_transposed_channels():
    assert logs.classify(TRANSPOSED_CHANNELS).check == "input.channels"


def _documented_ids() -> set[str]:
    """Check ids in docs/checks.md, or named in docs/executorch-source.md (a source
    checkout's own checks), written as `a.b` in backticks."""
    docs = Path(__file__).resolve().parents[2] / "docs"
    text = (docs / "checks.md").read_text() + (docs / "executorch-source.md").read_text()
    return set(re.findall(r"`([a-z_0-9]+\.[a-z_0-9]+)`", text))


def test_every_pattern_gives_a_documented_check():
    documented = set(LEGACY_CHECKS) | _documented_ids()
    for _, check in logs.PATTERNS:
        names = {check.format(p) for p in ("stride", "padding", "dilation", "output_padding")}
        assert names & documented, check


def test_the_resize_probes_are_read():
    capacity = logs.classify(
        "[tensor_impl.cpp:156] Attempted to resize a bounded tensor with a maximum capacity of "
        "0 elements to 4294967288 elements.\n"
    )
    assert (capacity.kind, capacity.numel) == ("capacity", 4294967288)
    static = logs.classify(
        "[tensor_impl.cpp:135] Attempted to resize a static tensor. Expected shape (0, 0, 0), "
        "but received (1, 4, 1073741822).\n"
    )
    assert (static.kind, static.sizes) == ("static", (1, 4, 1073741822))


def test_an_unknown_log_keeps_its_first_words():
    verdict = logs.classify("[program.cpp:12] Something new 0x21 went wrong at 3 places\n")
    assert verdict.kind == "unknown"
    assert verdict.check == "executorch.unknown:Something new NxN went wrong at"
    # No log line at all: the exception's message.
    assert logs.classify("dim_order size 2 != dim 3").check == (
        "executorch.unknown:dim_order size N != dim N"
    )
