"""The legacy kernel's four known bugs crash the sanitized build the way they should, and
the current kernel rejects the same calls cleanly with the right check ids."""

import pytest
from builders import STRIDES_PAST_INT32, conv, conv_t, input_strides_past_int32, t

from convcheck.fixedint import INT64_MAX, INT64_MIN

# name: (case, entry, legacy crash kind, legacy crash site prefix, current check id)
BUGS = {
    "groups_zero": (
        conv(groups=0),
        "check",
        "division-by-zero",
        "step_groups checks_legacy.c:",
        "groups.nonpos",
    ),
    "bias_shorter_than_out_channels": (
        conv(bias=t(1)),
        "run",
        "heap-buffer-overflow READ",
        "load_float32 elements.c:",
        "bias.length",
    ),
    "empty_byte_bias": (
        conv(bias=t(0, dtype="uint8")),
        "run",
        "heap-buffer-overflow READ",
        "load_uint8 elements.c:",
        "bias.length",
    ),
    "bool_bias": (
        conv(bias=t(4, dtype="bool")),
        "run",
        "SEGV null",
        "regular_convolution conv_loops.c:",
        "bias.dtype",
    ),
    # The loops' set-up computes the input's strides in int32; current refuses an empty
    # spatial dim beside a non-empty batch and channel dim before that.
    "input_strides_past_int32": (
        input_strides_past_int32(),
        "run",
        "signed-integer-overflow",
        "int32_strides conv_loops.c:",
        "input.empty_spatial",
    ),
    "transposed_huge_groups": (
        conv_t(bias=t(1), weight=t(4, 4, 3), groups=INT64_MAX),
        "check",
        "signed-integer-overflow",
        "step_bias_shape checks_legacy.c:",
        "groups.gt_weight0",
    ),
}


def _judge_one(judge, case, entry):
    (outcome,) = judge.check([case]) if entry == "check" else judge.run([case])
    return outcome


@pytest.mark.parametrize("name", BUGS)
def test_legacy_crashes_with_the_sanitizer_report(legacy, name):
    case, entry, kind, site, _ = BUGS[name]
    outcome = _judge_one(legacy, case, entry)
    assert outcome.verdict == "crash", outcome
    assert outcome.crash_kind == kind, outcome
    assert outcome.crash_site.startswith(site), outcome


@pytest.mark.parametrize("name", BUGS)
@pytest.mark.parametrize("entry", ["check", "run"])
def test_current_rejects_cleanly(current, name, entry):
    case, _, _, _, check = BUGS[name]
    outcome = _judge_one(current, case, entry)
    assert (outcome.verdict, outcome.check) == ("reject", check), outcome


def test_check_entry_touches_no_data(legacy):
    """The over-read and the null call are in the loops: the check entry accepts."""
    short, bool_bias = BUGS["bias_shorter_than_out_channels"][0], BUGS["bool_bias"][0]
    outcomes = legacy.check([short, bool_bias])
    assert [(o.verdict, o.out_sizes) for o in outcomes] == [("accept", (1, 4, 3))] * 2


# Each unchecked int64 multiply or add of legacy, reached: (case, the C function and file).
LEGACY_OVERFLOWS = {
    # bias.length fails (w.size(0) is 0), and its message multiplies groups once more.
    "bias_message_groups_mul": (
        conv_t(input=t(1, 0, 5), weight=t(0, 4, 3), bias=t(2), out=t(1, 0, 7), groups=-INT64_MAX),
        "step_bias_shape checks_legacy.c",
    ),
    # A hugely negative groups passes both groups checks when w.size(0) is 0.
    "channels_groups_mul": (
        conv(weight=t(0, 2, 3), bias=None, out=t(1, 0, 3), groups=INT64_MIN + 1),
        "cc_step_channels checks_shared.c",  # the step both revisions take
    ),
    "two_times_padding": (conv(padding=(2**62,)), "kernel_output_size checks_legacy.c"),
    "dilation_times_kernel": (conv(dilation=(2**62,)), "kernel_output_size checks_legacy.c"),
    # numerator = 2 + 2 * p - 0 - 1 = INT64_MAX, and INT64_MAX / 1 + 1 overflows.
    "numerator_plus_one": (
        conv(input=t(1, 2, 2), weight=t(4, 2, 1), bias=None, padding=(2**62 - 1,)),
        "kernel_output_size checks_legacy.c",
    ),
}


@pytest.mark.parametrize("name", LEGACY_OVERFLOWS)
def test_legacy_signed_overflow_sites(legacy, name):
    case, where = LEGACY_OVERFLOWS[name]
    (outcome,) = legacy.check([case])
    assert (outcome.verdict, outcome.crash_kind) == ("crash", "signed-integer-overflow"), outcome
    assert outcome.crash_site.startswith(f"{where}:"), outcome


def test_plain_build_dies_of_the_signal(legacy_plain):
    (outcome,) = legacy_plain.check([conv(groups=0)])
    assert (outcome.verdict, outcome.crash_kind) == ("crash", "SIGFPE")


@pytest.mark.parametrize("entry", ["check", "run"])
def test_current_handles_every_legacy_overflow_cleanly(current, entry):
    cases = [case for case, _ in LEGACY_OVERFLOWS.values()]
    outcomes = current.check(cases) if entry == "check" else current.run(cases)
    assert [o.verdict for o in outcomes] == ["reject"] * len(cases), outcomes


# Too large to run: legacy's check entry accepts them (the loops never run).
@pytest.mark.parametrize("name", STRIDES_PAST_INT32)
def test_current_refuses_loop_strides_past_int32(current, legacy, name):
    case, check = STRIDES_PAST_INT32[name]
    assert [(o.verdict, o.check) for o in current.check([case])] == [("reject", check)]
    assert [o.verdict for o in legacy.check([case])] == ["accept"]
