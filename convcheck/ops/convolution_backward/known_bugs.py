"""The bug classes of ``legacy`` that issue 30 and the measured reproducers name, as the
signatures that show each (convolution's classes it calls into keep convolution's names)."""

from convcheck.ops.convolution.known_bugs import LEGACY_BUG_CLASSES as CONVOLUTION
from convcheck.registry import class_of

_SHARED = (
    "groups = 0",
    "groups overflow before validation",
    "unbounded padding",
    "unbounded dilation",
    "output size past 32 bits",
)

LEGACY_BUG_CLASSES: dict[str, list[tuple[str, ...]]] = {
    # weight [2,1,2,2], all three requested, bias_sizes [1] (or none beside a [1]
    # grad_bias): op_convolution_backward.cpp:191
    "grad_bias shorter than the output channels": [
        ("crash", "heap-buffer-overflow READ", "loops.grad_bias"),
    ],
    # an output_mask of length 1: :55 (0: :51)
    "output_mask read past its length": [
        ("crash", "heap-buffer-overflow READ", "output_mask.read"),
    ],
    **{name: CONVOLUTION[name] for name in _SHARED},
    # The regular output size's size_t arithmetic wraps where the dilated kernel passes
    # the padded input (a kernel or dilation far too large), and its int64 reading.
    "output size wraps in size_t": [
        (kind, f"output_sizes.dim*.{site}")
        for site in ("minus_dilated", "minus_1", "numerator", "plus_1")
        for kind in ("overflow", "ordering")
    ],
    # The resizes give the gradients their strides in int32, a size of 0 counting as 1.
    "gradient strides past int32": [
        (kind, f"resize.{name}.strides.dim*")
        for name in ("grad_input", "grad_weight", "grad_bias")
        for kind in ("ordering", "overflow")
    ],
}


def bug_class(signature: tuple[str, ...]) -> str | None:
    return class_of(signature, LEGACY_BUG_CLASSES)
