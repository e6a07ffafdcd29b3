"""ExecuTorch's log lines, turned into convcheck's check ids (docs/checks.md).

A failed check in the portable kernel returns ``InvalidArgument``; which check failed is
only in the log it prints on stderr, innermost first::

    [kernel_ops_util.cpp:53] Expected array[0] > 1, found 0
    [kernel_ops_util.cpp:44] Check failed (int_array_all_ge(array, min_val)):
    [kernel_ops_util.cpp:421] Check failed (stride_is_valid(stride, kernel_ndim, false)):
    [op_convolution.cpp:363] Check failed (check_convolution_args( in, weight, ...)):
    [method.cpp:1483] KernelCall failed at instruction 0:0 in operator ...

``classify`` reads the lines in order and answers with the first that one of ``PATTERNS``
recognises. The patterns match the messages, not the line numbers (which move from one
release to the next); a log that none matches is ``executorch.unknown:<first words>``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# [file.cpp:NNN] message
LOG_LINE = re.compile(r"^\[(?P<where>[\w.+-]+:\d+)\] (?P<message>.*)$", re.M)

# (pattern, check id); "{0}" in a check id is the pattern's first group. In the order the
# kernel runs its checks; the first line (innermost) that matches decides.
PATTERNS: tuple[tuple[str, str], ...] = (
    (r"Check failed \(tensors_have_same_dtype\(in, weight, out\)\)", "dtype.mismatch"),
    (r"Check failed \(tensor_is_default_or_channels_last_dim_order\(in\)\)", "dim_order.input"),
    (
        r"Check failed \(tensor_is_default_or_channels_last_dim_order\(weight\)\)",
        "dim_order.weight",
    ),
    (r"Check failed \(tensor_is_default_or_channels_last_dim_order\(out\)\)", "dim_order.out"),
    (r"Expect input tensor to be 3-D or 4-D", "rank.input"),
    (r"Check failed \(tensor_is_rank\(weight, in\.dim\(\)\)\)", "rank.weight"),
    (r"Check failed \(tensor_is_rank\(out, in\.dim\(\)\)\)", "rank.out"),
    (r"Check failed \(tensor_is_rank\(bias\.value\(\), 1\)\)", "bias.rank"),
    (r"bias length must equal number of output channels", "bias.length"),
    # A wrong length names the array; a value out of range is reported by int_array_all_ge
    # (which does not), then by the array's own check.
    (r"Expected (stride|padding|dilation|output_padding) to have size", "{0}.length"),
    (r'param_array_is_valid\(\s*"(output_padding)"', "{0}.range"),
    (r"Check failed \((stride|padding|dilation)_is_valid\(", "{0}.range"),
    (r"output padding must be smaller than either stride or dilation", "output_padding.too_large"),
    (r"expected weight to be at least", "groups.gt_weight0"),
    (r"expected weight to be divisible by", "groups.not_div_weight0"),
    (r"expected input to have -?\d+ channels", "input.channels"),
    (r"input channels must match weight\.size\(0\) in transposed", "input.channels"),
    (r"Check failed \(tensors_have_same_dim_order\(in, out\)\)", "dim_order.in_out"),
    (r"produces an invalid output size", "output.invalid"),
    (r"Overflow computing numel at dimension", "out.resize"),
    (r"Unhandled dtype \w+ for convolution\.out", "dtype.unsupported"),
)
_COMPILED = tuple((re.compile(p), check) for p, check in PATTERNS)

# What the out tensor's resize says when it fails for want of room: the harness's own
# probes (see _craft.py), not a check of the kernel.
CAPACITY = re.compile(
    r"Attempted to resize a bounded tensor with a maximum capacity of (\d+) elements "
    r"to (\d+) elements"
)
STATIC_SHAPE = re.compile(
    r"Attempted to resize a static tensor\. Expected shape \(([\d, ]*)\), "
    r"but received \(([\d, -]*)\)"
)


@dataclass(frozen=True)
class LogVerdict:
    """What a failed execution's log says: a check id, or how the resize of out failed."""

    kind: str  # "reject", "capacity", "static", "unknown"
    check: str | None = None
    numel: int | None = None  # "capacity": the elements the kernel asked for
    sizes: tuple[int, ...] | None = None  # "static": the sizes the kernel computed
    line: str = ""  # the log line that decided, for people


def lines(log: str) -> list[tuple[str, str]]:
    """``(where, message)`` of each ExecuTorch log line, in order."""
    return [(m["where"], m["message"].strip()) for m in LOG_LINE.finditer(log)]


def unknown_id(message: str) -> str:
    words = re.sub(r"-?\d+", "N", message).split()[:6]
    return "executorch.unknown:" + " ".join(words)


def classify(log: str) -> LogVerdict:
    found = lines(log)
    for where, message in found:
        text = f"[{where}] {message}"
        capacity = CAPACITY.search(message)
        if capacity:
            return LogVerdict("capacity", numel=int(capacity[2]), line=text)
        static = STATIC_SHAPE.search(message)
        if static:
            sizes = tuple(int(s) for s in static[2].split(",") if s.strip())
            return LogVerdict("static", sizes=sizes, line=text)
        for pattern, check in _COMPILED:
            match = pattern.search(message)
            if match:
                return LogVerdict("reject", check.format(*match.groups()), line=text)
    first = found[0][1] if found else log.strip().split("\n")[0]
    return LogVerdict("unknown", unknown_id(first or "no log"), line=first)
