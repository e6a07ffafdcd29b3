"""The bug classes of ``legacy`` that the upstream thread (ExecuTorch PR 24385) names, as
the finding signatures that show each. Quality tests and benchmarks measure the fuzzer by
whether, and how fast, it rediscovers them."""

from convcheck.registry import class_of

LEGACY_BUG_CLASSES: dict[str, list[tuple[str, ...]]] = {
    "wrong bias length accepted": [("missing-check", "bias.length")],
    "wrong bias length over-read": [
        ("crash", "heap-buffer-overflow READ", "bias_reads.bias_index"),
    ],
    "groups = 0": [("crash", "division-by-zero", "groups.weight0_rem")],
    "groups overflow before validation": [("ordering", "bias_shape.groups_mul")],
    "kernel larger than the padded input accepted": [("missing-check", "kernel.gt_padded_input")],
    "output size past 32 bits": [("overflow", "output_sizes.dim*.narrow")],
    "unbounded padding": [
        ("overflow", "output_sizes.dim*.two_pad"),
        ("ordering", "output_sizes.dim*.two_pad"),
    ],
    "unbounded dilation": [
        ("overflow", "output_sizes.dim*.dilated_kernel"),
        ("ordering", "output_sizes.dim*.dilated_kernel"),
    ],
    "transposed output-size wrap": [
        ("overflow", "output_sizes.dim*.times_stride"),
        ("overflow", "output_sizes.dim*.result"),
        ("overflow", "output_sizes.dim*.in_minus_1"),
        ("overflow", "output_sizes.dim*.minus_two_pad"),
    ],
    "bool bias": [("crash", "SEGV null", "bias_load_fn.call")],
    "5-D rejected where torch accepts": [("over-strict", "rank.input")],
    # Not in the thread: found in ExecuTorch's own source (issue 14). The resize of out
    # computes its strides in int32, where a size of 0 counts as 1.
    "out strides past int32": [
        ("crash", "signed-integer-overflow", "out_strides.dim*"),
        ("ordering", "out_strides.dim*"),
    ],
    # Not in the thread either: the loops' set-up (convolution_wrapper) computes input's and
    # weight's strides in int32 the same way, for a non-empty out only. Weight's needs a run
    # longer than the run entry's limits (a kernel dim of 0 beside a huge one), so
    # campaigns show the input one.
    "input or weight strides past int32": [
        ("crash", "signed-integer-overflow", "wrapper_strides.input.dim*"),
        ("crash", "signed-integer-overflow", "wrapper_strides.weight.dim*"),
    ],
}


def bug_class(signature: tuple[str, ...]) -> str | None:
    return class_of(signature, LEGACY_BUG_CLASSES)
