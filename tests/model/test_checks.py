"""Hand cases per check, both revisions: the verdict, the check id, and the UB on the way.

Expected values are worked out by hand from the C (legacy) and the thread (current),
never by running the model.
"""

import pytest
from builders import STRIDES_PAST_INT32, conv, conv_t, input_strides_past_int32, t

from convcheck import model
from convcheck.fixedint import INT32_MAX, INT64_MAX, INT64_MIN

A, R = "accept", "reject"
CL4 = (0, 2, 3, 1)

# name, case, legacy (verdict, check-or-sizes), current (verdict, check-or-sizes)
TABLE = [
    ("valid 1-D", conv(), (A, [1, 4, 3]), (A, [1, 4, 3])),
    (
        "weight dtype differs",
        conv(weight=t(4, 2, 3, dtype="float64")),
        (R, "dtype.mismatch"),
        (R, "dtype.mismatch"),
    ),
    (
        "out dtype differs",
        conv(out=t(1, 4, 3, dtype="int32")),
        (R, "dtype.mismatch"),
        (R, "dtype.mismatch"),
    ),
    ("float64 bias is loaded", conv(bias=t(4, dtype="float64")), (A, [1, 4, 3]), (A, [1, 4, 3])),
    (
        "2-D all channels-last",
        conv(input=t(1, 2, 5, 5, order=CL4), weight=t(4, 2, 3, 3), out=t(1, 4, 1, 1, order=CL4)),
        (A, [1, 4, 3, 3]),
        (A, [1, 4, 3, 3]),
    ),
    (
        "channels-last input, contiguous out",
        conv(input=t(1, 2, 5, 5, order=CL4), weight=t(4, 2, 3, 3), out=t(1, 4, 1, 1)),
        (R, "dim_order.in_out"),
        (A, [1, 4, 3, 3]),
    ),
    (
        "3-D tensor is never channels-last",
        conv(input=t(1, 2, 5, order=(0, 2, 1))),
        (R, "dim_order.input"),
        (R, "dim_order.input"),
    ),
    (
        "regular weight in another order",
        conv(input=t(1, 2, 5, 5), weight=t(4, 2, 3, 3, order=(1, 0, 2, 3)), out=t(1, 4, 1, 1)),
        (R, "dim_order.weight"),
        (R, "dim_order.weight"),
    ),
    (
        "transposed weight in any order",
        conv_t(weight=t(4, 2, 3, order=(1, 0, 2))),
        (A, [1, 2, 7]),
        (A, [1, 2, 7]),
    ),
    (
        "2-D input tensor",
        conv(input=t(1, 2), weight=t(4, 2), out=t(1, 4)),
        (R, "rank.input"),
        (R, "rank.input"),
    ),
    (
        "3-D convolution",
        conv(input=t(1, 2, 3, 3, 3), weight=t(4, 2, 1, 1, 1), out=t(1, 4, 1, 1, 1)),
        (R, "rank.input"),
        (A, [1, 4, 3, 3, 3]),
    ),
    ("weight rank differs", conv(weight=t(4, 2, 3, 3)), (R, "rank.weight"), (R, "rank.weight")),
    ("out rank differs", conv(out=t(1, 4)), (R, "rank.out"), (R, "rank.out")),
    ("2-D bias", conv(bias=t(4, 1)), (R, "bias.rank"), (R, "bias.rank")),
    ("bias too short", conv(bias=t(2)), (A, [1, 4, 3]), (R, "bias.length")),
    ("empty bias", conv(bias=t(0)), (A, [1, 4, 3]), (R, "bias.length")),
    ("bias too long", conv(bias=t(1000)), (A, [1, 4, 3]), (R, "bias.length")),
    (
        "bias with empty weight",
        conv(weight=t(0, 2, 3), bias=t(3)),
        (R, "bias.length"),
        (R, "groups.gt_weight0"),
    ),
    ("bool bias", conv(bias=t(4, dtype="bool")), (A, [1, 4, 3]), (R, "bias.dtype")),
    ("groups 0", conv(groups=0), (R, "input.channels"), (R, "groups.nonpos")),
    ("groups -1", conv(groups=-1), (R, "input.channels"), (R, "groups.nonpos")),
    ("groups 3 of 4", conv(groups=3), (R, "groups.not_div_weight0"), (R, "groups.not_div_weight0")),
    ("groups 8 of 4", conv(groups=8), (R, "groups.gt_weight0"), (R, "groups.gt_weight0")),
    ("groups 2", conv(input=t(1, 4, 5), groups=2), (A, [1, 4, 3]), (A, [1, 4, 3])),
    ("input channels wrong", conv(input=t(1, 3, 5)), (R, "input.channels"), (R, "input.channels")),
    (
        "transposed input channels wrong",
        conv_t(input=t(1, 3, 5)),
        (R, "input.channels"),
        (R, "input.channels"),
    ),
    ("stride 0", conv(stride=(0,)), (R, "stride.range"), (R, "stride.range")),
    (
        "stride of two values in 1-D",
        conv(stride=(1, 1)),
        (R, "stride.length"),
        (R, "stride.length"),
    ),
    ("no stride", conv(stride=()), (R, "stride.length"), (R, "stride.length")),
    ("stride 2^31", conv(stride=(2**31,)), (A, [1, 4, 1]), (R, "stride.range")),
    ("stride INT32_MAX", conv(stride=(INT32_MAX,)), (A, [1, 4, 1]), (A, [1, 4, 1])),
    ("padding -1", conv(padding=(-1,)), (R, "padding.range"), (R, "padding.range")),
    ("dilation 0", conv(dilation=(0,)), (R, "dilation.range"), (R, "dilation.range")),
    (
        "output_padding ignored when regular",
        conv(output_padding=(-5, 7, 9)),
        (A, [1, 4, 3]),
        (A, [1, 4, 3]),
    ),
    (
        "output_padding -1",
        conv_t(output_padding=(-1,)),
        (R, "output_padding.range"),
        (R, "output_padding.range"),
    ),
    (
        "output_padding = stride = dilation",
        conv_t(output_padding=(1,)),
        (R, "output_padding.too_large"),
        (R, "output_padding.too_large"),
    ),
    (
        "output_padding below stride",
        conv_t(stride=(2,), output_padding=(1,)),
        (A, [1, 2, 12]),
        (A, [1, 2, 12]),
    ),
    (
        "kernel larger than input, stride 2",
        conv(input=t(1, 1, 2), weight=t(1, 1, 3), bias=None, out=t(1, 1, 1), stride=(2,)),
        (A, [1, 1, 1]),
        (R, "kernel.gt_padded_input"),
    ),
    (
        "kernel fits the padded input",
        conv(
            input=t(1, 1, 2),
            weight=t(1, 1, 3),
            bias=None,
            out=t(1, 1, 1),
            stride=(2,),
            padding=(1,),
        ),
        (A, [1, 1, 1]),
        (A, [1, 1, 1]),
    ),
    (
        "dilated kernel larger than input",
        conv(input=t(1, 2, 4), dilation=(2,)),
        (R, "output.invalid"),
        (R, "kernel.gt_padded_input"),
    ),
    ("kernel dim 0", conv(weight=t(4, 2, 0)), (A, [1, 4, 6]), (R, "kernel.nonpos")),
    ("transposed kernel dim 0", conv_t(weight=t(4, 2, 0)), (A, [1, 2, 4]), (R, "kernel.nonpos")),
    (
        "empty spatial dim",
        conv(input=t(1, 2, 0), padding=(2,)),
        (A, [1, 4, 2]),
        (R, "input.empty_spatial"),
    ),
    (
        "empty spatial dim, empty batch",
        conv(input=t(0, 2, 0), padding=(2,)),
        (A, [0, 4, 2]),
        (A, [0, 4, 2]),
    ),
    ("empty channels", conv(input=t(1, 0, 5), weight=t(4, 0, 3)), (A, [1, 0, 3]), (A, [1, 0, 3])),
    ("transposed", conv_t(), (A, [1, 2, 7]), (A, [1, 2, 7])),
    (
        "transposed, output size 0",
        conv_t(input=t(1, 4, 1), weight=t(4, 2, 1), padding=(1,), bias=None),
        (R, "output.invalid"),
        (R, "output.invalid"),
    ),
    (
        "transposed output past INT32_MAX",
        conv_t(input=t(1, 2, 3), weight=t(2, 4, 3), bias=None, stride=(INT32_MAX,)),
        (A, [1, 4, 1]),
        (R, "output.too_large"),
    ),
    (
        "transposed stride 2^62 wraps unsigned",
        conv_t(stride=(2**62,)),
        (A, [1, 2, 3]),
        (R, "stride.range"),
    ),
    (
        "padding 2^40 is cut to 32 bits",
        conv(padding=(2**40,)),
        (A, [1, 4, 3]),
        (R, "padding.range"),
    ),
    (
        "out numel past int64",
        conv(
            input=t(INT32_MAX, 1, INT32_MAX, INT32_MAX),
            weight=t(1, 1, 1, 1),
            bias=None,
            out=t(1, 1, 1, 1),
        ),
        (R, "out.resize"),
        (R, "out.resize"),
    ),
    # The loops' set-up recomputes input's and weight's strides in int32: legacy accepts
    # (the overflow is in the loops), current refuses before them.
    (
        "input strides past int32",
        STRIDES_PAST_INT32["input"][0],
        (A, [1, 1, 2097154]),
        (R, "input.stride_too_large"),
    ),
    (
        "weight strides past int32",
        STRIDES_PAST_INT32["weight"][0],
        (A, [1, 1, 1, 2]),
        (R, "weight.stride_too_large"),
    ),
    (
        "1-D weight whose unsqueezed strides pass int32",
        STRIDES_PAST_INT32["unsqueezed_weight"][0],
        (A, [1, 1, 32768]),
        (R, "weight.stride_too_large"),
    ),
    (
        "bool tensors",
        conv(
            input=t(1, 2, 5, dtype="bool"),
            weight=t(4, 2, 3, dtype="bool"),
            out=t(1, 4, 3, dtype="bool"),
            bias=None,
        ),
        (R, "dtype.unsupported"),
        (R, "dtype.unsupported"),
    ),
]


def expected_outcome(expected):
    verdict, detail = expected
    if verdict == A:
        return (A, None, tuple(detail))
    return (R, detail, None)


@pytest.mark.parametrize("revision, column", [("legacy", 2), ("current", 3)])
@pytest.mark.parametrize("row", TABLE, ids=[row[0] for row in TABLE])
def test_verdict_and_check_id(row, revision, column):
    outcome = model.run(row[1], revision).outcome
    assert (outcome.verdict, outcome.check, outcome.out_sizes) == expected_outcome(row[column])


@pytest.mark.parametrize("row", TABLE, ids=[row[0] for row in TABLE])
def test_current_never_has_undefined_behaviour_in_the_checks(row):
    assert model.run(row[1], "current").ub == ()


def ub(case, revision="legacy"):
    return [(e.kind, e.site) for e in model.run(case, revision).ub]


def test_legacy_groups_zero_is_a_remainder_by_zero():
    assert ub(conv(groups=0)) == [("division-by-zero", "groups.weight0_rem")]


def test_legacy_transposed_bias_of_length_one_multiplies_unvalidated_groups():
    case = conv_t(input=t(1, 4, 5), weight=t(4, 4, 3), bias=t(1), groups=INT64_MAX)
    assert ub(case) == [("signed-integer-overflow", "bias_shape.groups_mul")]
    assert model.run(case, "legacy").outcome.check == "groups.gt_weight0"


def test_legacy_failing_bias_check_multiplies_again_in_its_message():
    # transposed, bias length 5 != 1, w.size(0) == 0: fails, and the message multiplies.
    case = conv_t(input=t(1, 0, 5), weight=t(0, 4, 3), bias=t(5), groups=INT64_MIN)
    assert ub(case) == [("signed-integer-overflow", "bias_shape.message_groups_mul")]


def test_legacy_huge_dilation_overflows_and_still_accepts():
    case = conv(input=t(1, 2, 3), dilation=(2**62,))
    assert ub(case) == [("signed-integer-overflow", "output_sizes.dim0.dilated_kernel")]
    assert model.run(case, "legacy").outcome.out_sizes == (1, 4, 3)


def test_legacy_huge_padding_doubles_past_int64():
    case = conv(padding=(2**62,))
    assert ("signed-integer-overflow", "output_sizes.dim0.two_pad") in ub(case)


def test_legacy_output_size_past_int32_is_narrowed_not_undefined():
    run = model.run(conv(padding=(2**40,)), "legacy")
    assert run.ub == ()
    assert [(e.conversion, e.value, e.result) for e in run.narrowing] == [
        ("i64->i32", 2**41 + 3, 3)
    ]


def test_loops_read_a_short_bias_past_its_end_only_in_legacy():
    run = model.run(conv(bias=t(2)), "legacy")
    assert [(e.kind, e.site) for e in run.ub] == [
        ("heap-buffer-overflow READ", "bias_reads.bias_index")
    ]
    assert model.predict(run, with_loops=False).verdict == A
    assert model.predict(run, with_loops=True).crash_kind == "heap-buffer-overflow READ"


def test_bool_bias_calls_a_null_load_function_in_legacy():
    run = model.run(conv(bias=t(4, dtype="bool")), "legacy")
    assert model.predict(run, with_loops=True).crash_kind == "SEGV null"


def test_empty_out_returns_before_the_loops():
    run = model.run(conv(input=t(0, 2, 5), bias=t(2)), "legacy")
    assert run.outcome.out_sizes == (0, 4, 3)
    assert run.ub == ()


def documented_checks(revision):
    """docs/checks.md's table of a revision: each step with its check ids, in order."""
    import re
    from pathlib import Path

    text = (Path(__file__).parents[2] / "docs" / "checks.md").read_text()
    section = text.split(f"## {revision} ")[1].split("\n## ")[0]
    steps, step = {}, None
    for row in re.finditer(r"^\| *\d* *\| *(?:`(\w+)`)?[^|]*\|([^|]*)\|", section, re.M):
        step = row[1] or step
        # `.length` in a row stands for `<step>.length`.
        ids = [f"{step}{i}" if i.startswith(".") else i for i in re.findall(r"`([\w.]+)`", row[2])]
        steps.setdefault(step, [])
        steps[step] += [i for i in ids if "." in i]
    return {name: tuple(ids) for name, ids in steps.items() if ids}


@pytest.mark.parametrize("revision", sorted(model.REVISIONS))
def test_the_order_of_checks_is_the_documented_one(revision):
    """Signatures place a rejection in this order (findings.parting): it is docs/checks.md's."""
    steps = model.revision_named(revision)
    assert steps.checks == documented_checks(revision)
    assert list(steps.checks) == [s.__name__ for s in steps.steps if s.__name__ in steps.checks]


def test_legacy_loops_compute_input_strides_in_int32():
    case = input_strides_past_int32()
    run = model.run(case, "legacy")
    assert ub(case) == [("signed-integer-overflow", "wrapper_strides.input.dim1")]
    assert model.predict(run, with_loops=False) == run.outcome
    assert run.outcome.out_sizes == (1, 1, 1, 2)
    assert model.predict(run, with_loops=True).crash_site == "wrapper_strides.input.dim1"


def test_legacy_unsqueezed_weight_overflows_where_its_own_strides_fit():
    case = STRIDES_PAST_INT32["unsqueezed_weight"][0]
    assert ub(case) == [("signed-integer-overflow", "wrapper_strides.weight.dim3")]
