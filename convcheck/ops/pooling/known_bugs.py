"""The bug classes both pooling kernels share (issue 29's list, measured on ExecuTorch
main cff6f4dd32, built with ASan and UBSan: docs/checks-pooling.md), as the finding
signatures that show each (each op's ``bug_class`` reads them with ``ops.class_of``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from convcheck.fixedint import WORK_PAST_LIMIT

Classes = Mapping[str, Sequence[tuple[str, ...]]]


def ub_at(*sites: str, kind: str = "signed-integer-overflow") -> list[tuple[str, ...]]:
    """The signatures of undefined behaviour at ``sites``: the model's ordering or
    overflow, the sanitized kernel's crash."""
    return [
        signature
        for site in sites
        for signature in (("crash", kind, site), ("ordering", site), ("overflow", site))
    ]


# The unsigned operations and conversions of ``_kernel_output_size_helper`` (no UB:
# they wrap) and the narrowing after it.
WRAPPING_SITES = (
    *("two_pad_u", "plus_two_pad", "dilated_u", "minus_dilated", "minus_1"),
    *("ceil_u", "plus_ceil", "numerator", "narrow"),
)

# What the stride's missing check lets through, in either kernel.
STRIDE_CLASSES: dict[str, list[tuple[str, ...]]] = {
    "stride 0 divides by zero": ub_at("output_sizes.dim*.div_stride", kind="division-by-zero"),
    "unchecked stride overflows the output size": ub_at(
        *(
            f"output_sizes.dim*.{site}"
            for site in ("stride_minus_1", "last_start", "size_minus_1", "plus_1", "drop_last")
        )
    ),
    "negative stride, or a stride list of any length, accepted": [
        ("missing-check", "stride.range"),
        ("missing-check", "stride.length"),
    ],
    # legacy divides truncating toward zero, and a window larger than the input by less
    # than the stride gives 1 position where ATen's floor gives 0.
    "kernel larger than the input accepted": [("missing-check", "output.invalid")],
    # The helper's sum is size_t, converted back to int64, and its result stored into the
    # int32 size type: a kernel far past the input wraps to a size that passes the check.
    # Against torch: a size just past INT32_MAX narrows to a negative one, refused as
    # invalid where torch gives the size.
    "output size wraps (size_t arithmetic, the int32 size type)": [
        *(("overflow", f"output_sizes.dim*.{site}") for site in WRAPPING_SITES),
        ("over-strict", "output.invalid"),
    ],
    # The resize computes out's strides, the loops input's, in int32.
    "strides past int32": ub_at("out_strides.dim*", "indices_strides.dim*")
    + ub_at("loop_strides.input.dim*"),
    # The loops run every tap of the kernel, inside the input or not: a kernel of 2^20
    # with padding 2^19 on a 1x1 input loops 2^40 times (ATen: a millisecond). Our kernel
    # halts where a window's taps outside the input pass a limit, as the model predicts
    # (``legacy.idle_taps``).
    "the loops visit every tap (work past limit)": [("crash", WORK_PAST_LIMIT, "loops.idle_taps")],
}

# What the other checks let through, in either kernel, against torch.
CHECK_CLASSES: dict[str, list[tuple[str, ...]]] = {
    # ``padding_is_valid`` loops over the padding's own length: one value, which pads both
    # dims, is held to the first kernel dim only.
    "one padding value checked against one kernel dim": [
        ("missing-check", "padding.gt_half_kernel")
    ],
    # ATen takes its window as ints and refuses a value past INT32_MAX; the kernel takes
    # int64 and computes with it (``current`` bounds them as torch does).
    "window values past int32 accepted": [("missing-check", "window.past_int32")],
}
