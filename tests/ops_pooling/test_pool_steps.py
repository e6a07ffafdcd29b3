"""Each revision's steps on the calls of issue 29's list and their neighbours, written by
hand: what legacy (ExecuTorch cff6f4dd32, as measured there with ASan and UBSan) does, and
what current does instead. The kernel's own answer to these calls comes with its C
kernel; here the model's prediction of the sanitized kernel (``model.predict``) is held
to the measured reports, and current to ATen's check path (``pooling.aten``)."""

import pytest
from pool_builders import avg, max_pool

from convcheck import model, registry
from convcheck.case import TensorSpec
from convcheck.ops.pooling import aten
from convcheck.ops.pooling.checks import Call
from convcheck.ops.pooling.legacy import first_window_idle, first_window_inside

INT64_MIN = -(2**63)
CHANNELS_LAST = (0, 2, 3, 1)


def kernel(case, revision):
    """The sanitized kernel's answer as the model predicts it, with the loops run."""
    return model.predict(model.run(case, revision), with_loops=True).describe()


@pytest.mark.parametrize(
    "case, legacy, current",
    [
        (avg(), "accept [1, 1, 2, 2]", "accept [1, 1, 2, 2]"),
        (max_pool(), "accept [1, 1, 2, 2]", "accept [1, 1, 2, 2]"),
        # Stride [0, 0], either op: kernel_ops_util.cpp:213.
        (
            avg(stride=(0, 0)),
            "crash division-by-zero at output_sizes.dim0.div_stride",
            "reject stride.range",
        ),
        (
            max_pool(stride=(0, 0)),
            "crash division-by-zero at output_sizes.dim0.div_stride",
            "reject stride.range",
        ),
        # avg_pool2d, stride [INT64_MIN, INT64_MIN] with ceil_mode: :212.
        (
            avg(stride=(INT64_MIN,) * 2, ceil_mode=True),
            "crash signed-integer-overflow at output_sizes.dim0.stride_minus_1",
            "reject stride.range",
        ),
        # max_pool2d_with_indices, kernel [3, 3], dilation [2^62, 2^62]: :211.
        (
            max_pool(kernel=(3, 3), dilation=(2**62,) * 2),
            "crash signed-integer-overflow at output_sizes.dim0.dilated_kernel",
            "reject dilation.range",
        ),
        # avg_pool2d, 1x1, kernel 2^32, padding 2^31, count_include_pad:
        # kernel_ops_util.h:200; current bounds the window to int32, as torch's CPU
        # kernel does.
        (
            avg((1, 1, 1, 1), (2**32,) * 2, padding=(2**31,) * 2),
            "crash signed-integer-overflow at loops.pool_size",
            "reject kernel_size.range",
        ),
        # With divisor_override the area divides nothing and its overflow goes unreported
        # (the checkout's loops ran on): the idle taps are what halts.
        (
            avg((2, 1, 3, 1), (2**33,) * 2, padding=(2**32,) * 2, divisor=6),
            "crash work past limit at loops.idle_taps",
            "reject kernel_size.range",
        ),
        # Accepted where torch refuses: a negative stride gives a 5x5 output.
        (avg((1, 1, 1, 1), (5, 5), stride=(-1, -1)), "accept [1, 1, 5, 5]", "reject stride.range"),
        # A kernel larger than the input: legacy's truncating division gives 1.
        (avg((1, 1, 1, 1), (5, 5)), "accept [1, 1, 1, 1]", "reject output.invalid"),
        (max_pool(dilation=(0, 0)), "accept [1, 1, 2, 2]", "reject dilation.range"),
        (max_pool(dilation=(1,) * 5), "accept [1, 1, 2, 2]", "reject dilation.length"),
        # Dilation -3: 7x7 where ATen refuses (33 of its 49 elements never written).
        (
            max_pool((1, 1, 1, 1), (3, 3), stride=(1, 1), dilation=(-3, -3)),
            "accept [1, 1, 7, 7]",
            "reject dilation.range",
        ),
        # legacy refuses a channels-last input to avg_pool2d; current computes it.
        (
            avg((1, 2, 4, 4), order=CHANNELS_LAST, out_order=CHANNELS_LAST),
            "reject dim_order.input_channels_last",
            "accept [1, 2, 2, 2]",
        ),
        # The output size past INT32_MAX: legacy's narrowing makes it negative.
        (
            avg((1, 1, 2**31 - 1), (2, 2), (1, 1), (1,)),
            "reject output.invalid",
            "reject output.too_large",
        ),
    ],
)
def test_each_revision_on_the_issue_list(case, legacy, current):
    assert kernel(case, "legacy") == legacy
    assert kernel(case, "current") == current


def test_legacy_avg_asks_for_one_layout_not_one_dim_order():
    """``tensors_have_same_dim_order`` asks whether input and out are both contiguous or
    both channels-last, whatever their ranks: on the checkout a 4-D input beside a 3-D
    out passes it, and out's resize refuses the call."""
    case = avg((1, 1, 1, 1), (1, 1))
    three_d_out = case.replace(out=TensorSpec((1, 1, 1), "float32"))
    assert kernel(three_d_out, "legacy") == "reject out.resize"
    channels_last_out = case.replace(out=TensorSpec((1, 1, 1, 1), "float32", CHANNELS_LAST))
    assert kernel(channels_last_out, "legacy") == "reject dim_order.in_out"


def test_the_stride_is_never_checked_in_legacy_its_ids_never_fire():
    """legacy's stride step checks the kernel size again: with any stride at all the
    stride's ids never come, the kernel size's do."""
    for stride in ((0,), (-5, 1), (1, 2, 3), (INT64_MIN, INT64_MIN)):
        assert not kernel(avg(stride=stride), "legacy").startswith("reject stride")
    assert kernel(avg(kernel=(0, 2), stride=(0,)), "legacy") == "reject kernel_size.range"


def test_stride_0_is_an_ordering_where_another_dim_is_refused():
    """The division by zero happens before the output-size check refuses the other dim:
    the model alone sees it (ordering), no kernel needed."""
    case = max_pool((1, 1, 1), (2, 2), stride=(0, 1))
    _, _, found = model.classify(case, "legacy")
    assert [(f.kind, f.site) for f in found] == [("ordering", "output_sizes.dim0.div_stride")]
    assert model.classify(case, "current")[2] == []


@pytest.mark.parametrize("op_case", [avg, max_pool])
def test_the_loops_visit_every_tap_in_legacy_only(op_case):
    """Input 1x1, kernel 2^20, padding 2^19: accepted by both checks, and legacy's loops
    would run 2^40 times, all but one on taps outside the input (ATen's, and current's,
    visit the one inside): our kernel halts on it."""
    case = op_case((1, 1, 1, 1), (2**20,) * 2, padding=(2**19,) * 2)
    assert model.run(case, "legacy").outcome.describe() == "accept [1, 1, 1, 1]"
    assert kernel(case, "legacy") == "crash work past limit at loops.idle_taps"
    assert kernel(case, "current") == "accept [1, 1, 1, 1]"
    assert aten.check(case, op_case().OP).describe() == "accept [1, 1, 1, 1]"


@pytest.mark.parametrize(
    "k, p, d, n",
    [
        (k, p, d, n)
        for k in (1, 2, 5)
        for p in range(0, k // 2 + 1)
        for d in (-2, 0, 1, 2, 3)
        for n in (1, 2, 4)
    ],
)
def test_the_first_windows_taps_inside_are_counted_as_the_loops_visit_them(k, p, d, n):
    visited = [t * d - p for t in range(k)]
    assert first_window_inside(k, p, d, n) == sum(0 <= x < n for x in visited)


def test_the_limit_is_on_each_windows_idle_taps():
    """On a 1x1 input, 2^16 + 1 squared taps less the one inside is just past 2^32; 2^16
    squared less one is not."""
    past = avg((1, 1, 1, 1), (2**16 + 1,) * 2, padding=(2**15,) * 2)
    assert first_window_idle(Call(past)) == (2**16 + 1) ** 2 - 1 > 2**32
    assert kernel(past, "legacy") == "crash work past limit at loops.idle_taps"
    within = avg((1, 1, 1, 1), (2**16,) * 2, padding=(2**15,) * 2)
    assert first_window_idle(Call(within)) == 2**32 - 1
    assert kernel(within, "legacy") == "accept [1, 1, 1, 1]"


def test_a_small_kernel_is_no_work_past_limit():
    assert kernel(avg((2, 3, 64, 64), (3, 3), padding=(1,)), "legacy") == "accept [2, 3, 22, 22]"


INT64_MAX = 2**63 - 1


@pytest.mark.parametrize(
    "case, legacy",
    [
        # One element of INT64_MIN divided by an override of -1: op_avg_pool2d.cpp:74.
        (avg((1, 1, 2, 2), (1, 1), divisor=-1), "crash signed-integer-overflow at loops.divide"),
        # Two of them summed, whatever the divisor.
        (avg((1, 1, 2, 2), (2, 2)), "crash signed-integer-overflow at loops.plus"),
        (avg((1, 1, 2, 2), (2, 2), divisor=-1), "crash signed-integer-overflow at loops.plus"),
        # The first window reads one element, the second two: the quotient comes first.
        (
            avg((1, 1, 1, 3), (1, 2), stride=(1, 2), padding=(0, 1), divisor=-1),
            "crash signed-integer-overflow at loops.divide",
        ),
        # The first window reads two, the last (ceil_mode) one: the sum comes first.
        (
            avg((1, 1, 1, 3), (1, 2), stride=(1, 2), ceil_mode=True, divisor=-1),
            "crash signed-integer-overflow at loops.plus",
        ),
    ],
)
def test_int64_min_in_the_input_overflows_legacys_window_and_current_wraps(case, legacy):
    filled = case.replace(input=TensorSpec(case.input.sizes, "int64"), int64_fill=INT64_MIN)
    filled = filled.replace(out=TensorSpec(case.out.sizes, "int64"))
    assert kernel(filled, "legacy") == legacy
    assert kernel(filled, "current").startswith("accept")
    # The same call on the small values every run has, or on float data: no overflow.
    assert kernel(filled.replace(int64_fill=None), "legacy").startswith("accept")
    as_float = case.replace(int64_fill=INT64_MIN)
    assert kernel(as_float, "legacy").startswith("accept")


@pytest.mark.parametrize(("reads", "legacy"), [(3, "accept"), (4, "crash")])
def test_a_sum_overflows_at_the_add_that_leaves_int64(reads, legacy):
    """Three of INT64_MAX // 3 fit in int64, four do not."""
    case = avg((1, 1, 1, 4), (1, reads), dtype="int64", fill=INT64_MAX // 3)
    assert kernel(case, "legacy").startswith(legacy)
    signature = ("crash", "signed-integer-overflow", "loops.plus")
    assert registry.get("avg_pool2d").bug_class(signature) == "int64 window sum overflows"


@pytest.mark.parametrize("case", [avg(divisor=-1, ceil_mode=True), max_pool(dilation=(2, 1))])
def test_the_json_form_is_read_off_the_declaration(case):
    assert registry.loads_case(case.dumps(), op=case.OP) == case
    assert registry.op_of(case).name == case.OP


def test_a_case_line_names_the_window():
    line = registry.get("avg_pool2d").describe_case(avg(stride=(INT64_MIN,), divisor=2**62))
    assert (
        line
        == "in=f32[1,1,4,4] out=f32[1,1,1,1] k=[2,2] s=[-2^63] p=[0] count_include_pad divisor=2^62"
    )
