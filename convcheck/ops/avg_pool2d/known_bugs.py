"""The bug classes of ``avg_pool2d``'s ``legacy`` (issue 29), as the finding signatures
that show each: those it shares with max_pool2d (the stride's missing check, the loops)
and its own."""

from __future__ import annotations

from convcheck.ops.pooling.known_bugs import CHECK_CLASSES, STRIDE_CLASSES, ub_at

_WINDOW_SITES = ("minus_pad", "plus_kernel", "extent")

LEGACY_BUG_CLASSES: dict[str, list[tuple[str, ...]]] = {
    **STRIDE_CLASSES,
    **CHECK_CLASSES,
    # ``(ih1 - ih0) * (iw1 - iw0)``: input 1x1, kernel [2^32, 2^32], padding [2^31, 2^31].
    "padded window's area overflows": ub_at(
        "loops.pool_size",
        *(
            f"loops.{w}_window.dim*.{s}"
            for w in ("first", "last")
            for s in ("plus_kernel", "extent")
        ),
    ),
    # The values decide these two: a run whose int64 input is filled with an extreme
    # value (``AvgPool2dCase.int64_fill``) finds them. An override of -1 divides a sum
    # of INT64_MIN by -1; a window's sum is added up in int64.
    "INT64_MIN / -1 with divisor_override": ub_at("loops.divide"),
    "int64 window sum overflows": ub_at("loops.plus"),
    # The loops index by strides, yet the kernel wants the default order, and out in
    # the input's.
    "channels-last input refused": [
        ("over-strict", "dim_order.input_channels_last"),
        ("over-strict", "dim_order.in_out"),
    ],
}
