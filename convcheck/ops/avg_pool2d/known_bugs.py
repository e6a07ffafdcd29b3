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
    # The divisor is the override, and on int64 data holding INT64_MIN an override of -1
    # divides INT64_MIN by -1 (our C's ``avg_divide``). The values decide it: only a run
    # whose input holds INT64_MIN finds it; the model never sees values.
    "INT64_MIN / -1 with divisor_override": [
        ("crash", "signed-integer-overflow", "avg_divide"),
    ],
    # The loops index by strides, yet the kernel wants the default order, and out in
    # the input's.
    "channels-last input refused": [
        ("over-strict", "dim_order.input_channels_last"),
        ("over-strict", "dim_order.in_out"),
    ],
}
