"""The bug classes of ``max_pool2d_with_indices``'s ``legacy`` (issue 29), as the
finding signatures that show each: those it shares with avg_pool2d (the stride's missing
check, the loops) and the dilation's, whose check is missing too."""

from __future__ import annotations

from convcheck.ops.pooling.known_bugs import CHECK_CLASSES, STRIDE_CLASSES, ub_at

LEGACY_BUG_CLASSES: dict[str, list[tuple[str, ...]]] = {
    **STRIDE_CLASSES,
    **CHECK_CLASSES,
    # kernel [3, 3], dilation [2^62, 2^62]
    "unchecked dilation overflows the output size": ub_at("output_sizes.dim*.dilated_kernel"),
    # dilation 0 or below, or a list of 5: accepted; -3 leaves out elements unwritten.
    "dilation 0, negative, or a list of any length, accepted": [
        ("missing-check", "dilation.range"),
        ("missing-check", "dilation.length"),
    ],
}
