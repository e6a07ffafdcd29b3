"""How one case is put to ExecuTorch: run whole, or probed for its checks only.

ExecuTorch's kernel only runs whole: every tensor needs its bytes in the method's planned
memory (``set_inputs`` copies them in; the pybindings allocate, and zero, the whole
arena), and an accepted call computes the convolution. A case whose tensors or work are
too large for that is *probed* instead: its tensors get no memory at all (they are not
inputs and not planned: the checks never read data), and the out tensor gets a capacity
of 0, so the kernel stops at its resize of out, the first step that needs memory. What it
logs there says how far it got: see ``worker.py``.

The decision needs the size the kernel will compute for out (the capacity of a whole
run's out must cover it). ``legacy_out_sizes`` mirrors the kernel's own arithmetic by
running the model's ``output_sizes`` step (int64 wrapping, C division, narrowing to
int32): if the model is wrong about it, the run's resize fails and says so, which is an
infidelity the judge reports, not one it hides.
"""

from __future__ import annotations

from dataclasses import dataclass

from convcheck.case import DTYPE_SIZES
from convcheck.executorch_wheel.memory import ALIGNMENT, Limits, aligned, max_stride, nbytes
from convcheck.fixedint import INT32_MAX, INT64_MAX, Wrapping
from convcheck.ops.convolution import legacy
from convcheck.ops.convolution.case import ConvolutionCase
from convcheck.ops.convolution.checks import Call


@dataclass(frozen=True)
class Plan:
    whole: bool
    out_sizes: tuple[int, ...] | None  # what the legacy kernel computes, if it gets there
    capacity: tuple[int, ...]  # the out tensor's sizes in the program (its capacity)
    canary: int  # elements of the bias dtype planned right after the bias


def legacy_out_sizes(case: ConvolutionCase) -> tuple[int, ...] | None:
    """The sizes the legacy kernel's ``get_convolution_out_target_size`` computes, or None
    when the kernel rejects the ranks before it gets there."""
    ndim = case.input.rank - 2
    if case.input.rank not in (3, 4) or case.weight.rank != case.input.rank:
        return None
    for values in (case.stride, case.padding, case.dilation, case.output_padding):
        if len(values) > 1 and len(values) < ndim:
            return None  # rejected by the length checks; val_at would index past the end
    call = Call(case)
    legacy.output_sizes(call, Wrapping())
    return tuple(call.out_sizes)


def _numel(sizes: tuple[int, ...]) -> int:
    n = 1
    for s in sizes:
        n *= s
    return n


def work(case: ConvolutionCase, out_sizes: tuple[int, ...]) -> int:
    """Multiply-adds of the portable kernel's loops (an upper bound), plus one per output
    element and per (batch, group): how long a whole run takes."""
    groups = case.groups if 1 <= case.groups <= max(case.weight.sizes[0], 1) else 1
    taps = _numel(case.weight.sizes[2:])
    in_per_group = case.input.sizes[1] // groups
    positions = _numel(case.input.sizes[2:]) if case.transposed else _numel(out_sizes[2:])
    multiply_adds = out_sizes[0] * out_sizes[1] * positions * in_per_group * taps
    return multiply_adds + _numel(out_sizes) + out_sizes[0] * groups


def make_plan(case: ConvolutionCase, limits: Limits) -> Plan:
    sizes = legacy_out_sizes(case)
    # Sizes the kernel's resize of out accepts: it gets there with these, or rejects first.
    resized = (
        sizes
        if sizes is not None
        and len(sizes) == case.out.rank
        and all(s >= 0 for s in sizes)
        and _numel(sizes) <= INT64_MAX
        else None
    )
    capacity = resized if resized is not None else (0,) * case.out.rank
    canary = 0
    if case.bias is not None and resized is not None and case.bias.rank >= 1:
        canary = max(0, resized[1] - case.bias.sizes[0])
    tensors = [case.input, case.weight] + ([case.bias] if case.bias is not None else [])
    arena = sum(aligned(nbytes(t)) for t in tensors)
    if case.bias is not None:
        arena += canary * DTYPE_SIZES[case.bias.dtype] + ALIGNMENT
    arena += _numel(capacity) * DTYPE_SIZES[case.out.dtype]
    # The pybindings hold a tensor's strides in 32 bits (inputs and outputs alike), and
    # abort on an output whose strides do not fit: an empty tensor can have such strides.
    shapes = [(t.sizes, t.order) for t in tensors] + [(capacity, case.out.order)]
    whole = (
        arena <= limits.max_arena_bytes
        and all(max_stride(s, o) <= INT32_MAX for s, o in shapes)
        and (resized is None or work(case, resized) <= limits.max_work)
    )
    return Plan(whole, sizes, capacity, canary if whole else 0)
