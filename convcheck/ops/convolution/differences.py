"""What the kernel under test legitimately does differently from ATen: one table.

Each entry has a name, a reason, and a predicate over the case, the revision, the
kernel's outcome and torch's. ``explain_difference`` returns the first entry that
applies, or None; the engine calls it when the kernel and torch disagree, and an
explained disagreement is not a finding.

The table is written so that on ``current`` every difference between the kernel and
torch is explained, and on ``legacy`` none of the bugs that the thread of ExecuTorch
PR 24385 (``shared/reference/pr-24385-thread.txt``) names is: so it does NOT contain

* legacy's rejection of 5-D inputs (the over-strict bug the upstream fix addressed);
* the bias length read with misplaced parentheses, the missing bias dtype check, groups
  used before it is validated (groups = 0 divides by zero);
* the missing bounds on stride, padding and dilation, the output size narrowed to 32 bits
  (``params-32bit``, ``size-type-32bit`` and ``stride-type-32bit`` apply to ``current``
  only: legacy's int32 overflow of out's, input's or weight's strides is a crash, not a
  difference);
* the missing kernel-dim-0, kernel-larger-than-padded-input and empty-spatial checks;
* legacy's same-dim-order requirement for input and out (lifted upstream for Conv3d
  export: reported as over-strict on legacy).

Torch's own verdict is what torch does, wraps included (dilation 2^62 is accepted with a
nonsense shape); which of the two is right about such a call is for the exact-arithmetic
model to say, not for this table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from convcheck.fixedint import INT32_MAX
from convcheck.frozen import frozen
from convcheck.ops.convolution.case import ConvolutionCase
from convcheck.outcome import ACCEPT, REJECT, Outcome

__all__ = ["DIFFERENCES", "Difference", "explain_difference"]


@dataclass(frozen=True)
class Difference:
    """An intentional difference: why the kernel and torch may answer differently."""

    name: str
    reason: str

    def describe(self) -> str:
        return f"intentional difference {self.name}: {self.reason}"


@frozen
class _Context:
    case: ConvolutionCase
    revision: str
    kernel: Outcome
    torch: Outcome
    verdict: Any  # the TorchVerdict, when the caller has it

    def kernel_rejects(self, *checks: str) -> bool:
        return self.kernel.verdict == REJECT and (not checks or self.kernel.check in checks)

    def torch_rejects(self, *checks: str) -> bool:
        return self.torch.verdict == REJECT and (not checks or self.torch.check in checks)

    @property
    def empty_batch_or_channel(self) -> bool:
        sizes = self.case.input.sizes
        return len(sizes) >= 2 and (sizes[0] == 0 or sizes[1] == 0)


@dataclass(frozen=True)
class _Entry:
    difference: Difference
    applies: Callable[[_Context], bool]


PARAMS = ("stride", "padding", "dilation", "output_padding")

# What torch's Empty backend (N == 0 or C == 0) never checks: it runs after
# check_shape_forward and multiplies empty tensors, so dtype, kernel dims, dilation,
# output padding and the output sizes' signs go unchecked.
EMPTY_SKIPS = (
    "dtype.mismatch",
    "dtype.unsupported",
    "bias.dtype",
    "kernel.nonpos",
    "dilation.range",
    "output_padding.too_large",
    "output.invalid",
)


def _out_tensor(c: _Context) -> bool:
    if c.kernel_rejects("rank.out", "dim_order.out"):
        return True
    case = c.case
    return (
        c.kernel_rejects("dtype.mismatch")
        and case.input.dtype == case.weight.dtype
        and case.out.dtype != case.input.dtype
    )


def _dim_order(c: _Context) -> bool:
    return c.kernel_rejects("dim_order.input", "dim_order.weight")


def _bool_input(c: _Context) -> bool:
    return c.case.input.dtype == "bool" and (
        c.kernel_rejects("dtype.unsupported") or c.torch_rejects("dtype.unsupported")
    )


def _params_32bit(c: _Context) -> bool:
    if c.revision != "current" or not c.kernel_rejects(*(f"{p}.range" for p in PARAMS)):
        return False
    assert c.kernel.check is not None  # a rejection
    values = getattr(c.case, c.kernel.check.split(".")[0])
    return any(v > INT32_MAX for v in values)


def _size_type(c: _Context) -> bool:
    return c.revision == "current" and c.kernel_rejects("output.too_large")


def _stride_type(c: _Context) -> bool:
    return c.revision == "current" and c.kernel_rejects(
        "output.stride_too_large", "input.stride_too_large", "weight.stride_too_large"
    )


def _empty(c: _Context) -> bool:
    if not c.empty_batch_or_channel:
        return False
    if c.torch.verdict == ACCEPT and c.kernel_rejects(*EMPTY_SKIPS):
        return True
    # The Empty backend indexes weight.view(-1)[0] and bias[0]: it fails on an empty
    # weight or bias. A kernel dim of 0 is not this (the thread's missing check).
    if c.kernel.verdict == ACCEPT and c.torch_rejects(
        "torch.empty_select", "torch.empty_broadcast"
    ):
        return not any(k == 0 for k in c.case.weight.sizes[2:])
    return False


def _bias_dtype(c: _Context) -> bool:
    bias = c.case.bias
    if bias is None or bias.dtype == c.case.input.dtype:
        return False
    return (c.kernel_rejects("bias.dtype") and c.torch.verdict == ACCEPT) or (
        c.kernel.verdict == ACCEPT and c.torch_rejects("torch.bias_dtype")
    )


def _missing_kernel(c: _Context) -> bool:
    return c.kernel.verdict == ACCEPT and c.torch_rejects("torch.not_implemented")


def _rank_above_5(c: _Context) -> bool:
    return c.case.input.rank > 5 and c.kernel_rejects("rank.input") and c.torch.verdict == ACCEPT


def _output_padding_unused(c: _Context) -> bool:
    return (
        not c.case.transposed
        and c.kernel.verdict == ACCEPT
        and c.torch_rejects("output_padding.range", "output_padding.length")
    )


def _no_output_channel(c: _Context) -> bool:
    w = c.case.weight.sizes
    return (
        c.case.transposed
        and len(w) >= 3
        and w[1] == 0
        and not any(k == 0 for k in w[2:])
        and c.kernel.verdict == ACCEPT
        and c.torch_rejects("torch.empty_weight", "torch.empty_select")
    )


def _storage_bytes(c: _Context) -> bool:
    return c.kernel.verdict == ACCEPT and c.torch_rejects("torch.size_overflow")


def _torch_32bit_output(c: _Context) -> bool:
    """The sizes are right (current checks them in int64): torch's own math is not."""
    if c.revision != "current" or c.kernel.verdict != ACCEPT:
        return False
    assert c.kernel.out_sizes is not None  # an acceptance
    return c.torch_rejects("output.invalid") and any(s >= 2**30 for s in c.kernel.out_sizes[2:])


def _torch_alloc(c: _Context) -> bool:
    return c.kernel.verdict == ACCEPT and c.torch_rejects("torch.alloc")


def _onednn_only(c: _Context) -> bool:
    """Torch without oneDNN agrees with the kernel: torch disagrees with itself."""
    verdict = c.verdict
    if verdict is not None:
        if not verdict.torch_bug or verdict.no_onednn is None:
            return False
        return c.kernel.same_verdict(verdict.no_onednn)
    from convcheck.ops.convolution.torch_oracle import DEFAULT_THREADS, check_path

    without = check_path(c.case, threads=DEFAULT_THREADS, onednn=False).outcome
    return not c.torch.same_verdict(without) and c.kernel.same_verdict(without)


DIFFERENCES: tuple[_Entry, ...] = (
    _Entry(
        Difference(
            "out-tensor",
            "The kernel takes out= and requires its dtype to be the input's and weight's, its "
            "rank to be the input's and its dim order to be supported; torch's functional "
            "aten.convolution allocates its output and has no out argument.",
        ),
        _out_tensor,
    ),
    _Entry(
        Difference(
            "dim-order-support",
            "The kernel supports only contiguous and channels-last dim orders (and only "
            "contiguous for 3-D tensors, where ExecuTorch defines no channels-last); torch "
            "takes any strides.",
        ),
        _dim_order,
    ),
    _Entry(
        Difference(
            "bool-no-kernel",
            "There is no bool convolution in either: the kernel rejects a bool input when it "
            "reaches its dtype switch, torch when it dispatches (and neither when the output "
            "is empty); the order of that rejection among the other checks differs.",
        ),
        _bool_input,
    ),
    _Entry(
        Difference(
            "params-32bit",
            "current bounds stride, padding, dilation and output_padding to 32 bits so that "
            "no later product overflows; torch takes any int64 and its own arithmetic wraps "
            "(dilation 2^62 is accepted with a nonsense shape, the slow transposed kernels "
            "cut stride to int). Whether such a call should run is the exact-arithmetic "
            "model's to say.",
        ),
        _params_32bit,
    ),
    _Entry(
        Difference(
            "size-type-32bit",
            "ExecuTorch's tensor sizes are int32: current rejects an output size above "
            "INT32_MAX; torch's sizes are int64 (an empty batch makes any size cheap).",
        ),
        _size_type,
    ),
    _Entry(
        Difference(
            "stride-type-32bit",
            "ExecuTorch's tensor strides are int32 too, computed from the sizes with a size of "
            "0 counting as 1: current rejects an out whose strides would pass INT32_MAX, even "
            "an empty one, and, when the loops run, an input or weight whose strides would, "
            "where torch's int64 strides hold them.",
        ),
        _stride_type,
    ),
    _Entry(
        Difference(
            "empty-batch-or-channel",
            "The kernel validates everything even when the batch or channel dim is empty; "
            "torch's Empty backend (N == 0 or C == 0) runs after check_shape_forward only, "
            "skips every backend check (dtype, kernel dims, dilation, output padding, output "
            "sizes) and fails on an empty weight or bias it indexes.",
        ),
        _empty,
    ),
    _Entry(
        Difference(
            "bias-dtype",
            "Torch's acceptance of a bias dtype depends on the backend: the slow kernels "
            "cast any bias (bool included), oneDNN requires the input's dtype, the 3-D "
            "transposed kernel reads it as the input's. The kernel accepts any real bias "
            "dtype and rejects bool.",
        ),
        _bias_dtype,
    ),
    _Entry(
        Difference(
            "torch-missing-kernel",
            "Torch has no CPU kernel for some dtypes on some paths (integer transposed and "
            "dilated convolutions: NotImplementedError); the kernel computing them is not a "
            "finding.",
        ),
        _missing_kernel,
    ),
    _Entry(
        Difference(
            "rank-above-5",
            "The kernel supports 1-D to 3-D convolutions (inputs of rank 3 to 5); torch's "
            "Empty backend answers any rank when the batch or channel dim is empty.",
        ),
        _rank_above_5,
    ),
    _Entry(
        Difference(
            "output-padding-unused",
            "A regular convolution ignores output_padding in the kernel (the schema's "
            "argument is for transposed ones); torch still checks its length and sign.",
        ),
        _output_padding_unused,
    ),
    _Entry(
        Difference(
            "no-output-channel",
            "A transposed weight with no output channel per group gives an empty output in "
            "the kernel; torch's kernels refuse the empty weight.",
        ),
        _no_output_channel,
    ),
    _Entry(
        Difference(
            "torch-storage-bytes",
            "Torch refuses an output whose size in bytes overflows int64; the kernel does "
            "not allocate (out is the caller's) and counts elements only.",
        ),
        _storage_bytes,
    ),
    _Entry(
        Difference(
            "torch-32bit-output-size",
            "Torch's slow kernels compute output sizes in 32-bit ints, so an output size "
            "near INT32_MAX comes out negative there; the kernel's int64 size fits int32.",
        ),
        _torch_32bit_output,
    ),
    _Entry(
        Difference(
            "torch-alloc",
            "Torch could not allocate memory (its worker's address space is limited, and a "
            "huge output or im2col buffer does not fit): a resource limit, not a check.",
        ),
        _torch_alloc,
    ),
    _Entry(
        Difference(
            "onednn-only",
            "Torch answers differently with oneDNN disabled, and that answer is the "
            "kernel's: the disagreement is torch's with itself (reported as torch-bug).",
        ),
        _onednn_only,
    ),
)


def explain_difference(
    case: ConvolutionCase,
    revision: str,
    kernel_outcome: Outcome,
    torch_outcome: Outcome,
    verdict: Any = None,
) -> Difference | None:
    """The intentional difference that explains why the kernel and torch disagree.

    ``verdict`` (optional) is the whole TorchVerdict: with it, a torch answer that
    changes with oneDNN is judged by torch's own two answers; without it, by the check
    path's prediction.
    """
    context = _Context(case, revision, kernel_outcome, torch_outcome, verdict)
    for entry in DIFFERENCES:
        if entry.applies(context):
            return entry.difference
    return None
