"""What both revisions share: the call being checked, the step runner, common predicates.

A revision is a tuple of *steps*, one per C function (or per block of ``convolution_out``),
in the C's order. A step reads the call, does its arithmetic through the ``Arith`` it is
given, and either returns (passed) or raises ``Reject`` with a check id. The runner turns
that into an outcome and keeps the trace.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import NamedTuple

from convcheck.case import Case, TensorSpec, channels_last_order, contiguous_order
from convcheck.fixedint import Arith, NarrowEvent, Op, UbEvent
from convcheck.frozen import frozen
from convcheck.outcome import Outcome


class Reject(Exception):
    """Raised by a step: the kernel returns InvalidArgument with this check id."""

    def __init__(self, check: str) -> None:
        super().__init__(check)
        self.check = check


class Accept(Exception):
    """Raised by the early return on an empty out: the kernel returns before the loops."""


class Call:
    """The arguments as the C sees them, plus what the steps compute on the way. (Read
    once from the case: the steps read them several hundred times a run.)"""

    def __init__(self, case: Case) -> None:
        self.case = case
        self.input: TensorSpec = case.input
        self.weight: TensorSpec = case.weight
        self.bias: TensorSpec | None = case.bias
        self.out: TensorSpec = case.out
        self.transposed: bool = case.transposed
        self.groups: int = case.groups
        # Spatial dims: the kernel's ``in.dim() - 2``.
        self.ndim: int = case.input.rank - 2
        self.out_sizes: list[int] = []


Step = Callable[[Call, Arith], None]
# ``StepTrace(...)`` without the Python frame of the named tuple's generated ``__new__``.
_new_tuple = tuple.__new__


class StepTrace(NamedTuple):
    """One step of a run (a named tuple: a run records one per step it reaches)."""

    name: str
    ops: tuple[Op, ...]
    result: str  # "ok", "reject <id>", "accept (empty out)"
    in_loops: bool


@frozen
class ModelRun:
    """One run of a revision's steps over one case, under one arithmetic."""

    revision: str
    exact: bool
    outcome: Outcome
    ub: tuple[UbEvent, ...]
    narrowing: tuple[NarrowEvent, ...]
    steps: tuple[StepTrace, ...]

    @property
    def reject_step(self) -> int | None:
        """Index of the step that rejected, if any."""
        if self.outcome.verdict != "reject":
            return None
        return len(self.steps) - 1

    def first_ub(self, include_loops: bool = True) -> UbEvent | None:
        for event in self.ub:
            if include_loops or not self.steps[event.step].in_loops:
                return event
        return None


def run_steps(
    case: Case,
    revision: str,
    steps: Sequence[Step],
    loop_steps: frozenset[str],
    arith: Arith,
) -> ModelRun:
    call = Call(case)
    trace = arith.trace
    traces: list[StepTrace] = []
    outcome = None
    for index, (step, name, in_loops, passed) in enumerate(_plan(tuple(steps), loop_steps)):
        arith.step_index = index  # the step its events record
        first_op = len(trace)
        try:
            step(call, arith)
        except Reject as r:
            outcome = Outcome.reject(r.check)
            result = f"reject {r.check}"
        except Accept:
            outcome = Outcome.accept(call.out_sizes)
            result = "accept (empty out)"
        else:
            if len(trace) == first_op:
                traces.append(passed)
                continue
            result = "ok"
        traces.append(_new_tuple(StepTrace, (name, tuple(trace[first_op:]), result, in_loops)))
        if outcome is not None:
            break
    if outcome is None:
        outcome = Outcome.accept(call.out_sizes)
    return ModelRun(
        revision, arith.exact, outcome, tuple(arith.ub), tuple(arith.narrowing), tuple(traces)
    )


@functools.cache
def _plan(steps: tuple[Step, ...], loop_steps: frozenset[str]) -> tuple[tuple, ...]:
    """Each step with its name, whether it is in the loops, and its trace when it passes
    without arithmetic (most steps of most runs: one shared value)."""
    plan = []
    for step in steps:
        name = step.__name__
        in_loops = name in loop_steps
        plan.append((step, name, in_loops, StepTrace(name, (), "ok", in_loops)))
    return tuple(plan)


# -- predicates and helpers the C shares between checks ---------------------------------


def is_contiguous(t: TensorSpec) -> bool:
    return t.order == contiguous_order(t.rank)


def is_channels_last(t: TensorSpec) -> bool:
    """ExecuTorch defines channels-last only for 4-D and 5-D tensors."""
    return t.rank in (4, 5) and t.order == channels_last_order(t.rank)


def is_default_or_channels_last(t: TensorSpec) -> bool:
    return is_contiguous(t) or is_channels_last(t)


def val_at(values: tuple[int, ...], i: int, default: int = 1) -> int:
    """A parameter list of length 1 applies to every dim; an empty one means the default."""
    if len(values) == 1:
        return values[0]
    if len(values) > 1:
        return values[i]
    return default


def check_param_array(
    name: str, values: tuple[int, ...], ndim: int, minimum: int, maximum: int | None
) -> None:
    """Length 1 or one per spatial dim, every element within [minimum, maximum]."""
    if len(values) not in (1, ndim):
        raise Reject(f"{name}.length")
    for v in values:
        if v < minimum or (maximum is not None and v > maximum):
            raise Reject(f"{name}.range")


def either(first, second):
    """C's ``first || second`` of two comparisons, both made already (nothing to skip).

    On the model's own values, Python's ``or``: a branch atheris' coverage of the model
    sees (without it, its campaigns found a fifth fewer findings). On the solver's
    (``SymBool``), one condition ``first | second``: ``or`` would fork on the first
    and then on the second, and its two passing sides would double every path after it,
    once per spatial dim (current's rank-5 transposed calls: 375 paths instead of 72).
    """
    if isinstance(first, bool):
        return first or second
    return first | second


def check_output_padding_below_stride_or_dilation(call: Call) -> None:
    case = call.case
    for i in range(call.ndim):
        op = val_at(case.output_padding, i)
        if not either(op < val_at(case.stride, i), op < val_at(case.dilation, i)):
            raise Reject("output_padding.too_large")


# -- the tail of convolution_out, after the output sizes ------------------------------


def channels(call: Call, a: Arith) -> None:
    """The same check in both revisions: input channels are groups times weight.size(1)
    (regular) or weight.size(0) (transposed)."""
    in_channels = call.input.sizes[1]
    if not call.transposed:
        expected = a.mul_i64(call.groups, call.weight.sizes[1], "channels.groups_mul")
        if in_channels != expected:
            raise Reject("input.channels")
    elif in_channels != call.weight.sizes[0]:
        raise Reject("input.channels")


def output_size_valid(call: Call, a: Arith) -> None:
    """Batch and channels may be empty; a spatial output size must be positive."""
    sizes = call.out_sizes
    if any(s < 0 for s in sizes[:2]) or any(s <= 0 for s in sizes[2:]):
        raise Reject("output.invalid")


def resize_out(call: Call, a: Arith) -> None:
    """The tensor library refuses sizes whose element count does not fit its ssize_t."""
    numel = 1
    for d, size in enumerate(call.out_sizes):
        product = a.mul_checked_i64(numel, size, f"resize_out.numel_mul{d}")
        if product is None:
            raise Reject("out.resize")
        numel = product


def int32_strides(sizes: Sequence[int], order: Sequence[int], a: Arith, site: str) -> None:
    """The tensor library's strides for ``sizes`` in its int32 stride type: the innermost
    dim (by ``order``) has stride 1, each outer one the next inner one's stride times its
    size, where a size of 0 counts as 1 (so an empty tensor can overflow). The multiply of
    inner dim d is site ``<site>.dim<d>``."""
    if not order:
        return
    strides = [0] * len(order)
    strides[order[-1]] = 1
    for i in range(len(order) - 2, -1, -1):
        inner = order[i + 1]
        if sizes[inner] == 0:
            strides[order[i]] = strides[inner]
        else:
            strides[order[i]] = a.mul_i32(strides[inner], sizes[inner], f"{site}.dim{inner}")


def out_strides(call: Call, a: Arith) -> None:
    """The resize then gives out strides for its new sizes."""
    int32_strides(call.out_sizes, call.out.order, a, "out_strides")


def empty_out(call: Call, a: Arith) -> None:
    if any(s == 0 for s in call.out_sizes):
        raise Accept()


def dtype_switch(call: Call, a: Arith) -> None:
    """The loops are instantiated for real dtypes only (REALHBF16: no bool)."""
    if call.input.dtype == "bool":
        raise Reject("dtype.unsupported")


def unsqueezed(t: TensorSpec) -> tuple[list[int], tuple[int, ...]]:
    """A 1-D convolution runs as a 2-D one: its tensors get a size-1 dim at 2, which the
    dim order places just outside the old dim 2 (now 3). Where the old dim 2 was the
    outermost, that adds one product to the strides: the whole numel, sizes of 0 as 1."""
    if t.rank != 3:
        return list(t.sizes), t.order
    order: list[int] = []
    for d in t.order:
        order.extend((2, 3) if d == 2 else (d,))
    return [*t.sizes[:2], 1, t.sizes[2]], tuple(order)


def wrapper_strides(call: Call, a: Arith) -> None:
    """The loops' set-up (``convolution_wrapper``) computes input's and weight's strides
    in int32 from their sizes, 1-D ones unsqueezed first (and then out's, which
    ``out_strides`` computed already from the same sizes: they fit by now)."""
    for name, tensor in (("input", call.input), ("weight", call.weight)):
        sizes, order = unsqueezed(tensor)
        int32_strides(sizes, order, a, f"wrapper_strides.{name}")


def bias_reads(call: Call, a: Arith) -> None:
    """The loops read bias[oc] for every out channel oc: past its end if it is short."""
    bias = call.bias
    if bias is not None and bias.sizes[0] < call.out_sizes[1]:
        a.out_of_bounds_read("bias_reads.bias_index", bias.sizes[0], call.out_sizes[1])
