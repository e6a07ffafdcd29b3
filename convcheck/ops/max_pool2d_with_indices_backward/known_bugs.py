"""The bug classes of ``legacy`` that issue 30 and the measured reproducers name, as the
signatures that show each."""

from convcheck.registry import class_of


def _at(*sites: str) -> list[tuple[str, ...]]:
    """A model-side signature (overflow, ordering) at each site; a crash there is the
    same class (``class_of`` matches UB kinds by site)."""
    return [
        (kind, f"pool_sizes.dim*.{site}") for site in sites for kind in ("overflow", "ordering")
    ]


LEGACY_BUG_CLASSES: dict[str, list[tuple[str, ...]]] = {
    # indices [1,1,1,1] beside grad_output [1,1,2,2]: op_..._backward.cpp:125
    "indices smaller than grad_output over-read": [
        ("crash", "heap-buffer-overflow READ", "loops.indices_read"),
    ],
    # an index value of 1000 or -5: :128
    "index value outside grad_input": [
        ("crash", "heap-buffer-overflow READ", "loops.grad_input_access"),
    ],
    # The stride is never checked (kernel_ops_util.cpp:553 checks kernel_size again): a
    # division by 0 (:213), INT64_MIN - 1 in ceil mode, the ceil-mode product.
    "stride unchecked": [
        ("crash", "division-by-zero", "pool_sizes.dim*.div_stride"),
        *_at("div_stride", "stride_minus_1", "last_start"),
    ],
    # Nor the dilation (:556): d * (k - 1) overflows (:211), or is negative.
    "dilation unchecked": _at("dilated_kernel", "dilated_u"),
    # The size_t arithmetic of the output size wraps where the dilated kernel passes the
    # padded input (an unbounded kernel size or dilation), and the int64 it is read back as.
    "output size wraps in size_t": _at("minus_dilated", "minus_1", "numerator", "plus_ceil"),
    "output size past 32 bits": [("overflow", "pool_sizes.dim*.narrow")],
    # A numerator between -stride and 0 truncates to a size of 1 (torch floors: 0).
    "kernel larger than the padded input accepted": [("missing-check", "output.invalid")],
    # padding_is_valid loops over the padding's own length: one value, which pads both
    # dims, is held to the first kernel dim only.
    "one padding value checked against one kernel dim": [
        ("missing-check", "padding.gt_half_kernel")
    ],
    # The resize gives grad_input the input's sizes, and its strides in int32.
    "grad_input strides past int32": [
        ("crash", "signed-integer-overflow", "out_strides.dim*"),
        ("ordering", "out_strides.dim*"),
    ],
}


def bug_class(signature: tuple[str, ...]) -> str | None:
    return class_of(signature, LEGACY_BUG_CLASSES)
