"""The bug classes of ``legacy`` that issue 30 and the measured reproducers
(``shared/reference/executorch-windowed-ops.md``) name, as the signatures that show each."""

from convcheck.registry import class_of

LEGACY_BUG_CLASSES: dict[str, list[tuple[str, ...]]] = {
    # kernel_ops_util.cpp:640, ``size += before + after``: two int64 additions.
    "pad sum overflow": [
        ("overflow", "output_sizes.dim*.pad_sum"),
        ("ordering", "output_sizes.dim*.pad_sum"),
        ("crash", "signed-integer-overflow", "output_sizes.dim*.pad_sum"),
        ("overflow", "output_sizes.dim*.plus_size"),
        ("ordering", "output_sizes.dim*.plus_size"),
        ("crash", "signed-integer-overflow", "output_sizes.dim*.plus_size"),
    ],
    # The narrowed size: a wrong one accepted (torch's is exact), or one torch cannot
    # allocate accepted.
    "output size past 32 bits": [
        ("overflow", "output_sizes.dim*.narrow"),
        ("wrong-result", "sizes"),
        ("missing-check", "torch.size_overflow"),
    ],
    # The resize computes out's strides in int32, a size of 0 counting as 1.
    "out strides past int32": [
        ("crash", "signed-integer-overflow", "out_strides.dim*"),
        ("ordering", "out_strides.dim*"),
    ],
    "negative pad rejected where torch crops": [("over-strict", "pad.range")],
    "value checked where nothing is padded": [("over-strict", "value.overflow")],
    "padding before an empty dim rejected": [("over-strict", "out.too_small")],
}


def bug_class(signature: tuple[str, ...]) -> str | None:
    return class_of(signature, LEGACY_BUG_CLASSES)
