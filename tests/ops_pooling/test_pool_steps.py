"""Each revision's steps on the calls of issue 29's list and their neighbours, written by
hand: what legacy (ExecuTorch cff6f4dd32, as measured there with ASan and UBSan) does, and
what current does instead. The kernel's own answer to these calls comes with its C
kernel; here the model's prediction of the sanitized kernel (``model.predict``) is held
to the measured reports, and current to ATen's check path (``pooling.aten``)."""

import pytest
from pool_builders import avg, max_pool

from convcheck import model, registry
from convcheck.ops.pooling import aten
from convcheck.ops.pooling.work import loop_work, work_past_limit

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
    """Input 1x1, kernel 2^20, padding 2^19: accepted by both, and legacy's loops run
    2^40 times (ATen's, and current's, visit the one tap inside the input)."""
    case = op_case((1, 1, 1, 1), (2**20,) * 2, padding=(2**19,) * 2)
    assert kernel(case, "legacy") == kernel(case, "current") == "accept [1, 1, 1, 1]"
    assert loop_work(case, "legacy")[0] == 2**40 + 1
    assert work_past_limit(case, "legacy")
    assert loop_work(case, "current") == (2, 0)
    assert not work_past_limit(case, "current")
    assert aten.check(case, op_case().OP).describe() == "accept [1, 1, 1, 1]"


def test_a_small_kernel_is_no_work_past_limit():
    assert not work_past_limit(avg((2, 3, 64, 64), (3, 3), padding=(1,)), "legacy")


def test_int64_min_over_minus_1_is_not_the_models_to_see():
    """The divisor override -1 on int64 data divides INT64_MIN by -1 only when the data
    holds INT64_MIN: the model, which knows no values, predicts an accept, and the class
    is the run entry's to find (``known_bugs``)."""
    case = avg((1, 1, 1, 1), (1, 1), divisor=-1, dtype="int64")
    assert kernel(case, "legacy") == "accept [1, 1, 1, 1]"
    assert (
        registry.get("avg_pool2d").bug_class(("crash", "signed-integer-overflow", "loops.divide"))
        == "INT64_MIN / -1 with divisor_override"
    )


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
