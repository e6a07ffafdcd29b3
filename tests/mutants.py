"""Single-bug mutants of convcheck's own ``current`` kernel: each is the real source with
one edit, the kind a person makes (a wrong operand, a deleted check, an off-by-one, a
narrowed multiply), built sanitized as a ``--target`` library.

A mutant is (name, file, old text, new text); ``old`` must occur exactly once in the
file, so a change to the kernel that moves the text fails loudly instead of building an
unmutated copy.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import NamedTuple

from convcheck.native.build import compile_shared
from convcheck.ops.convolution.native import KERNEL


class Mutant(NamedTuple):
    name: str
    file: str
    old: str
    new: str


CURRENT = "checks_current.c"
SHARED = "checks_shared.c"
LOOPS = "conv_loops.c"

MUTANTS = [
    # groups, bias, channels: a wrong operand.
    Mutant(
        "groups-gt-wrong-operand",
        CURRENT,
        "if (w0 < call->groups) {",
        "if (call->weight.sizes[1] < call->groups) {",
    ),
    Mutant(
        "groups-rem-wrong-operand",
        CURRENT,
        "if (w0 % call->groups != 0) {",
        "if (call->input.sizes[1] % call->groups != 0) {",
    ),
    Mutant(
        "bias-length-wrong-operand",
        CURRENT,
        "                                        : (int64_t)call->weight.sizes[0];",
        "                                        : (int64_t)call->weight.sizes[1];",
    ),
    Mutant(
        "channels-transposed-wrong-operand",
        SHARED,
        "} else if (in_c != call->weight.sizes[0]) {",
        "} else if (in_c != call->weight.sizes[1]) {",
    ),
    # A deleted check.
    Mutant(
        "rank-weight-deleted",
        SHARED,
        '    if (call->weight.rank != call->input.rank) {\n        return "rank.weight";\n    }\n',
        "",
    ),
    Mutant(
        "groups-nonpos-deleted",
        CURRENT,
        '    if (call->groups < 1) {\n        return "groups.nonpos";\n    }\n',
        "",
    ),
    Mutant(
        "bias-rank-deleted",
        CURRENT,
        '    if (call->bias.rank != 1) {\n        return "bias.rank";\n    }\n',
        "",
    ),
    Mutant(
        "bias-dtype-deleted",
        CURRENT,
        '    if (call->bias.dtype == CONVCHECK_BOOL) {\n        return "bias.dtype";\n    }\n',
        "",
    ),
    Mutant(
        "out-strides-deleted",
        CURRENT,
        "    if (!cc_strides_fit(plan->out_rank, plan->out_sizes, call->out.dim_order)) {\n"
        '        return "output.stride_too_large";\n    }\n',
        "",
    ),
    Mutant(
        "dtype-switch-deleted",
        SHARED,
        '    if (call->input.dtype == CONVCHECK_BOOL) {\n        return "dtype.unsupported";\n'
        "    }\n",
        "",
    ),
    Mutant(
        "out-dtype-unchecked",
        SHARED,
        "call->input.dtype != call->weight.dtype || call->input.dtype != call->out.dtype",
        "call->input.dtype != call->weight.dtype",
    ),
    # A bound moved or dropped.
    Mutant(
        "rank-input-six",
        CURRENT,
        "const int32_t cc_revision_max_rank = 5;",
        "const int32_t cc_revision_max_rank = 6;",
    ),
    Mutant(
        "stride-unbounded",
        SHARED,
        "cc_param_array(call->stride, call->stride_len, ndim, 1, max,",
        "cc_param_array(call->stride, call->stride_len, ndim, 1, INT64_MAX,",
    ),
    Mutant(
        "dilation-zero-allowed",
        SHARED,
        "cc_param_array(call->dilation, call->dilation_len, ndim, 1, max,",
        "cc_param_array(call->dilation, call->dilation_len, ndim, 0, max,",
    ),
    Mutant(
        "padding-negative-allowed",
        SHARED,
        "cc_param_array(call->padding, call->padding_len, ndim, 0, max,",
        "cc_param_array(call->padding, call->padding_len, ndim, -8, max,",
    ),
    Mutant(
        "kernel-nonpos-zero-allowed",
        CURRENT,
        "if (call->weight.sizes[2 + i] < 1) {",
        "if (call->weight.sizes[2 + i] < 0) {",
    ),
    Mutant(
        "kernel-fits-off-by-one",
        CURRENT,
        "if (in + 2 * p < d * (k - 1) + 1) {",
        "if (in + 2 * p < d * (k - 1)) {",
    ),
    Mutant(
        "kernel-fits-one-padding",
        CURRENT,
        "if (in + 2 * p < d * (k - 1) + 1) {",
        "if (in + p < d * (k - 1) + 1) {",
    ),
    Mutant(
        "output-fits-off-by-one",
        CURRENT,
        "if (plan->out_sizes[i] > INT32_MAX) {",
        "if (plan->out_sizes[i] >= INT32_MAX) {",
    ),
    Mutant(
        "empty-spatial-channels-only",
        CURRENT,
        "if (in->sizes[0] == 0 || in->sizes[1] == 0) {",
        "if (in->sizes[1] == 0) {",
    ),
    Mutant(
        "output-valid-zero-allowed",
        SHARED,
        "plan->out_sizes[i] < 0 : plan->out_sizes[i] <= 0",
        "plan->out_sizes[i] < 0 : plan->out_sizes[i] < 0",
    ),
    Mutant(
        "output-padding-and",
        SHARED,
        "if (!(op < s || op < d)) {",
        "if (!(op < s && op < d)) {",
    ),
    Mutant(
        "weight-dim-order-transposed-too",
        SHARED,
        "if (!call->transposed && !cc_is_default_or_channels_last(&call->weight)) {",
        "if (!cc_is_default_or_channels_last(&call->weight)) {",
    ),
    Mutant(
        "param-length-one-refused",
        SHARED,
        "if (len != 1 && len != ndim) {",
        "if (len != ndim) {",
    ),
    # Arithmetic: a narrowed multiply, a dropped term.
    Mutant(
        "regular-size-narrowed-multiply",
        CURRENT,
        "(n + 2 * p - d * (k - 1) - 1) / s + 1;",
        "(n + 2 * (int32_t)p - d * (k - 1) - 1) / s + 1;",
    ),
    Mutant(
        "transposed-size-narrowed-multiply",
        CURRENT,
        "plan->out_sizes[2 + i] = (n - 1) * s - 2 * p",
        "plan->out_sizes[2 + i] = (int32_t)(n - 1) * (int32_t)s - 2 * p",
    ),
    Mutant(
        "transposed-size-drops-output-padding",
        CURRENT,
        "d * (k - 1) + op + 1;",
        "d * (k - 1) + 1;",
    ),
    # The loops: an off-by-one in the padding bound.
    Mutant(
        "loops-padding-off-by-one",
        LOOPS,
        "if (i2 < 0 || i2 >= in->sizes[4]) {",
        "if (i2 < 0 || i2 > in->sizes[4]) {",
    ),
    Mutant(
        "loops-regular-bias-skipped",
        LOOPS,
        "acc = add(a->kind, acc, load_bias_value(a, oc));",
        "(void)load_bias_value(a, oc);",
    ),
    Mutant(
        "transposed-loops-off-by-one",
        LOOPS,
        "if (o2 < 0 || o2 >= out->sizes[4]) {",
        "if (o2 < 0 || o2 > out->sizes[4]) {",
    ),
]


def mutated_sources(mutant: Mutant, directory: Path) -> list[Path]:
    """The ``current`` kernel's sources copied into ``directory``, one of them mutated."""
    names = list(KERNEL.sources["current"])
    for name in [*names, *KERNEL.headers]:
        text = (KERNEL.directory / name).read_text()
        if name == mutant.file:
            count = text.count(mutant.old)
            assert count == 1, f"{mutant.name}: {mutant.old!r} occurs {count} times in {name}"
            text = text.replace(mutant.old, mutant.new)
        (directory / name).write_text(text)
    return [directory / name for name in names]


def build(mutant: Mutant) -> Path:
    """The mutant's sanitized library (cached by its sources' hash like the kernel's)."""
    with tempfile.TemporaryDirectory(prefix="convcheck-mutant-") as directory:
        sources = mutated_sources(mutant, Path(directory))
        headers = [Path(directory) / name for name in KERNEL.headers]
        return compile_shared(sources, f"mutant-{mutant.name}", sanitized=True, headers=headers)
