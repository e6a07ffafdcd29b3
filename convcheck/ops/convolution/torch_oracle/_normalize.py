"""ATen's error messages, normalised to stable check ids by a table of patterns.

Where a message means what one of the kernel's checks means, it gets the kernel's id
(``docs/checks.md``); otherwise a ``torch.`` id. A few messages say too little on their
own (ATen's bias message covers rank and length; oneDNN says only that it "could not
create a primitive descriptor"); their entries look at the case to name the cause. A
message no entry matches becomes ``torch.unknown:<first words>``: reported, never merged
with another id.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

from convcheck.ops.convolution.case import ConvolutionCase
from convcheck.ops.convolution.torch_oracle.aten import (
    AtenWrapping,
    TorchError,
    calc_output_size,
    expand_params,
    storage_problem,
)

Refine = Callable[[re.Match, ConvolutionCase], str]


@dataclass(frozen=True)
class Pattern:
    regex: str
    check: str | Refine
    meaning: str  # for people: which ATen check this is

    def compiled(self) -> re.Pattern:
        return re.compile(self.regex)


def _bias_shape(m: re.Match, case: ConvolutionCase) -> str:
    # "expected bias to be 1-dimensional with N elements": one message for both.
    if case.bias is not None and case.bias.rank != 1:
        return "bias.rank"
    return "bias.length"


def _param_length(m: re.Match, case: ConvolutionCase) -> str:
    return f"{m.group(1)}.length"


def _predicted_output(case: ConvolutionCase) -> list[int] | None:
    """The output sizes ATen computes for this case (int64, wrapping), if it can."""
    if case.weight.rank < 3 or case.input.rank != case.weight.rank or case.groups <= 0:
        return None
    try:
        params = expand_params(case, case.weight.rank - 2)
    except TorchError:
        return None
    return calc_output_size(AtenWrapping(), case.input.sizes, case.weight.sizes, params)


def _output_problem(case: ConvolutionCase) -> str | None:
    out = _predicted_output(case)
    if out is None:
        return None
    spatial = out[2:]
    if any(s < 0 for s in out) or (not case.transposed and any(s < 1 for s in spatial)):
        return "output.invalid"
    if storage_problem(out, case.input.dtype) is not None:
        return "torch.size_overflow"
    return None


def _resource_or_onednn(case: ConvolutionCase, otherwise: str) -> str:
    """oneDNN's refusals and the size overflows of its memory: one order for both.

    Which message torch gives depends on whether it allocates the output before asking
    oneDNN (a channels-last output) or lets oneDNN refuse the memory descriptor; the id
    does not.
    """
    if case.input.rank > 5:
        return "rank.input"  # oneDNN's "cannot create std::vector larger than max_size()"
    problem = _output_problem(case)
    if problem is not None:
        return problem  # output.invalid, or torch.size_overflow
    if any(k == 0 for k in case.weight.sizes[2:]):
        return "kernel.nonpos"
    if case.transposed and case.weight.rank >= 2 and case.weight.sizes[1] == 0:
        return "torch.empty_weight"
    if any(d == 0 for d in case.dilation):
        return "dilation.range"  # ideep then drops every dilation
    return otherwise


def _onednn(m: re.Match, case: ConvolutionCase) -> str:
    """oneDNN refused the problem (or its memory); the case says why."""
    return _resource_or_onednn(case, "torch.onednn")


def _size_overflow(m: re.Match, case: ConvolutionCase) -> str:
    return _resource_or_onednn(case, "torch.size_overflow")


def _symint_list(m: re.Match, case: ConvolutionCase) -> str:
    """The dispatcher's SymInt[] conversion: the first list holding a value below -2^62."""
    for name in ("stride", "padding", "dilation", "output_padding"):
        if any(v < -(2**62) for v in getattr(case, name)):
            return f"{name}.range"
    return "torch.symint"


def _scalar_type(m: re.Match, case: ConvolutionCase) -> str:
    # A kernel's data_ptr<T>(): the weight's, or (3-D transposed) the bias's.
    if case.weight.dtype != case.input.dtype:
        return "dtype.mismatch"
    return "torch.bias_dtype"


def _empty_weight(m: re.Match, case: ConvolutionCase) -> str:
    if any(k == 0 for k in case.weight.sizes[2:]):
        return "kernel.nonpos"
    return "torch.empty_weight"


# In the order they are tried; the first match wins.
PATTERNS: tuple[Pattern, ...] = (
    Pattern(
        r"SymIntArrayRef expected to contain only concrete integers",
        _symint_list,
        "the dispatcher: a stride/padding/dilation/output_padding value below -2^62",
    ),
    Pattern(
        r"^weight should have at least three dimensions",
        "rank.weight",
        "_convolution prologue: weight rank < 3",
    ),
    Pattern(
        r"^non-positive groups is not supported|^expected groups to be greater than 0",
        "groups.nonpos",
        "_convolution prologue / check_shape_forward: groups <= 0",
    ),
    Pattern(
        r"^expected (stride|padding|dilation|output_padding) to be a single integer value",
        _param_length,
        "expand_param_if_needed: list length not 1 or the spatial rank",
    ),
    Pattern(r"^negative padding is not supported", "padding.range", "padding < 0"),
    Pattern(
        r"^negative output_padding is not supported",
        "output_padding.range",
        "output_padding < 0 (checked also when not transposed)",
    ),
    Pattern(
        r"^non-positive stride is not supported|^stride should be greater than zero",
        "stride.range",
        "stride <= 0 (the slow transposed kernels cut it to 32 bits)",
    ),
    Pattern(
        r"^dilation should be greater than zero|^non-positive dilation is not supported",
        "dilation.range",
        "dilation < 0 (check_shape_forward) or 0 (the backends)",
    ),
    Pattern(
        r"^Expected -?\d+-dimensional input for -?\d+-dimensional weight",
        "rank.weight",
        "input rank differs from weight rank",
    ),
    Pattern(
        r"^Given groups=-?\d+, expected weight to be at least",
        "groups.gt_weight0",
        "weight.size(0) < groups",
    ),
    Pattern(
        r"^Given groups=-?\d+, expected weight to be divisible by",
        "groups.not_div_weight0",
        "weight.size(0) % groups != 0",
    ),
    Pattern(
        r"^Given (groups=-?\d+|transposed=\d), weight of size .*, expected input.* to have",
        "input.channels",
        "input channels disagree with weight and groups",
    ),
    Pattern(
        r"expected bias to be 1-dimensional with",
        _bias_shape,
        "bias rank != 1 or bias length != output channels",
    ),
    Pattern(
        r"^Given padding=-?\d+ at dimension \d+ , expected padding to be at most|"
        r"^Padding (height|width|depth) too large",
        "torch.padding_too_large",
        "padding > INT64_MAX / 2 (check_shape_forward), > 2^61 (slow_conv3d)",
    ),
    Pattern(
        r"^Calculated padded input size per channel: .*Kernel size can't be greater",
        "kernel.gt_padded_input",
        "regular convolution: dilated kernel > padded input",
    ),
    Pattern(
        r"^Only zero batch or zero channel inputs are supported",
        "input.empty_spatial",
        "_select_conv_backend: an empty spatial dim with N and C non-zero",
    ),
    Pattern(
        r"^unsupported ConvNd parameters",
        "rank.input",
        "_select_conv_backend: no CPU kernel for an input of rank > 5",
    ),
    Pattern(
        r"^kernel size should be greater than zero",
        "kernel.nonpos",
        "slow kernels: a kernel dim of 0",
    ),
    Pattern(
        r"^non-empty (2D or 4D|2D or 5D|5D \(n_output_plane).*weight tensor expected|"
        r"tensor expected for weight",
        _empty_weight,
        "slow kernels: an empty weight (a kernel dim of 0, or no output channel)",
    ),
    Pattern(
        r"^output padding must be smaller than either stride or dilation",
        "output_padding.too_large",
        "slow transposed kernels: op >= stride and >= dilation",
    ),
    Pattern(
        r"Output size is too small|^calculated output size .* is too small",
        "output.invalid",
        "slow kernels: a spatial output size < 1 (< 0 when dilated)",
    ),
    Pattern(
        r"^Trying to create tensor with negative dimension|^invalid shape dimension|"
        r"^only one dimension can be inferred|can be any value and is ambiguous|"
        r"cannot be represented as a SymInt",
        "output.invalid",
        "a negative output size reaches the allocation or the Empty backend's view",
    ),
    Pattern(
        r"^expected scalar type \w+ but found \w+",
        _scalar_type,
        "a kernel reads the weight (or 3-D transposed: the bias) as the input's dtype",
    ),
    Pattern(
        r"^Mismatched Tensor types in NNPack",
        _scalar_type,
        "NNPACK: weight or bias not float32",
    ),
    Pattern(
        r"^Input type \(.*\) and weight type \(.*\) should be the same",
        "dtype.mismatch",
        "oneDNN: weight dtype differs from input dtype",
    ),
    Pattern(
        r"^Input type \(.*\) and bias type \(.*\) should be the same",
        "torch.bias_dtype",
        "oneDNN: bias dtype differs from input dtype",
    ),
    Pattern(
        r"^result type \w+ can't be cast to the desired output type \w+",
        "torch.bias_dtype",
        "bias added in place: its dtype does not cast to the output's",
    ),
    Pattern(r"not implemented for 'Bool'", "dtype.unsupported", "no kernel for bool"),
    Pattern(
        r"not implemented for '\w+'",
        "torch.not_implemented",
        "torch has no kernel for this dtype on this path (e.g. int32 transposed)",
    ),
    Pattern(
        r"could not create a primitive descriptor|could not construct a memory descriptor|"
        r"^dimensions are invalid",
        _onednn,
        "oneDNN refused the problem: the case names the cause",
    ),
    Pattern(
        r"numel: integer multiplication overflow|Storage size calculation overflowed|"
        r"Stride calculation overflowed|larger than max_size\(\)",
        _size_overflow,
        "a size product overflows int64",
    ),
    Pattern(
        r"DefaultCPUAllocator: can't allocate memory|alloc_cpu\.cpp",
        "torch.alloc",
        "an allocation failed (a resource limit, not a check)",
    ),
    Pattern(
        r"^select\(\): index \d+ out of range for tensor of size \[0\]",
        "torch.empty_select",
        "Empty backend: weight_view[0] or bias[0] of an empty tensor",
    ),
    Pattern(
        r"must match the size of tensor b",
        "torch.empty_broadcast",
        "Empty backend: input.view(-1) * weight_view does not broadcast",
    ),
    Pattern(r"Expected a value of type", "torch.schema", "an argument outside the schema"),
)

_COMPILED = tuple((p.compiled(), p) for p in PATTERNS)
UNKNOWN = "torch.unknown:"


def unknown_id(message: str) -> str:
    words = re.findall(r"[A-Za-z]+", message)[:4]
    return UNKNOWN + "_".join(w.lower() for w in words)


def normalize(error: str, message: str, case: ConvolutionCase) -> str:
    """A stable check id for what torch raised on ``case``."""
    first = message.strip().splitlines()[0] if message.strip() else ""
    m, pattern = _match(first)
    if pattern is None:
        return unknown_id(f"{error} {first}" if not first else first)
    check = pattern.check
    assert m is not None  # found with its pattern
    return check if isinstance(check, str) else check(m, case)


# Kept by first line: the check path raises on half of a campaign's cases, and every other
# one repeats a message met before (the sizes it names included); each new one is tried
# against the 35 patterns in turn.
@functools.lru_cache(maxsize=8192)
def _match(first: str) -> tuple[re.Match | None, Pattern | None]:
    """The first pattern that matches a message's first line, and its match."""
    for regex, pattern in _COMPILED:
        m = regex.search(first)
        if m is not None:
            return m, pattern
    return None, None


def is_unknown(check: str | None) -> bool:
    return check is not None and check.startswith(UNKNOWN)
