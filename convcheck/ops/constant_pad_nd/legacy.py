"""``legacy``: ExecuTorch's portable ``constant_pad_nd.out`` at cff6f4dd32 (its main of
August 2026).

Read beside ``kernels/portable/cpu/op_constant_pad_nd.cpp`` and
``kernels/portable/cpu/util/kernel_ops_util.cpp`` (``check_constant_pad_args``,
``resize_constant_pad_output``). Bugs included: a pair of pads is summed in int64 with no
bound (signed overflow at kernel_ops_util.cpp:640), the sum added to the int32 size is
stored back into the int32 size type (narrowed), and the loops' guards then meet an out
that is smaller than the padding asks for.
"""

from __future__ import annotations

from convcheck.fixedint import Arith
from convcheck.ops.constant_pad_nd.checks import (
    Call,
    dtypes,
    pad_length,
    ranks,
    resize_out,
    value_overflows,
)
from convcheck.ops.convolution.checks import out_strides

# ``tensors_have_same_dim_order`` of two tensors, as convolution calls it.
from convcheck.ops.convolution.legacy import same_dim_order
from convcheck.steps import Reject


def pad_range(call: Call, a: Arith) -> None:
    """Torch crops with a negative pad; this kernel refuses one."""
    if any(p < 0 for p in call.pad):
        raise Reject("pad.range")


def output_sizes(call: Call, a: Arith) -> None:
    """``size += before + after``: the pair's int64 sum, then int32 + int64 in int64,
    stored into the int32 size type."""
    sizes = []
    for d, size in enumerate(call.input.sizes):
        pads = call.pads(d)
        if pads is not None:
            site = f"output_sizes.dim{d}"
            total = a.add_i64(pads[0], pads[1], f"{site}.pad_sum")
            size = a.narrow_i32(a.add_i64(size, total, f"{site}.plus_size"), f"{site}.narrow")
        sizes.append(size)
    call.out_sizes = sizes


def value(call: Call, a: Arith) -> None:
    """In the dtype switch (every real dtype and bool, which any value
    converts to), whatever the pads."""
    if value_overflows(call.case.value, call.input.dtype):
        raise Reject("value.overflow")


# -- constant_pad_nd_out_impl: only the run entry, with data, gets here ------------------


def last_padded_dim(call: Call, a: Arith) -> None:
    """Each pair is summed again, in int64, to find the innermost padded dim: the last
    whose sum is positive (a sum that wraps negative pads nothing, to the loops)."""
    for d in range(call.input.rank):
        pads = call.pads(d)
        if pads is not None:
            if a.add_i64(pads[0], pads[1], f"last_padded_dim.dim{d}.pad_sum") > 0:
                call.last_padded_dim = d


def padding_loops(call: Call, a: Arith) -> None:
    """``apply_padding_to_dim``'s guards: before each run of padding and each copy, the
    room left in out must hold it. Out's sizes are the narrowed ones, so an out smaller
    than the padding is refused here; so is padding before a dim whose out is empty
    (its step is 0). The walk is offsets into out, in elements, as ``size_t``."""
    sizes, rank = call.input.sizes, call.input.rank
    if rank == 0:
        return
    out = call.out_sizes
    in_steps, out_steps = [1] * rank, [1] * rank
    for d in range(rank - 2, -1, -1):
        in_steps[d] = a.mul_u64(in_steps[d + 1], sizes[d + 1], f"loops.in_step{d}")
        out_steps[d] = a.mul_u64(out_steps[d + 1], out[d + 1], f"loops.out_step{d}")
    end = a.mul_u64(out_steps[0], out[0], "loops.out_numel")
    last = call.last_padded_dim

    def room(offset: int, count: int, step: int) -> None:
        if count > 0:
            if offset > end or step == 0:
                raise Reject("out.too_small")
            left = a.sub_u64(end, offset, "loops.left")
            if a.div_u64(left, step, "loops.room") < count:
                raise Reject("out.too_small")

    def walk(d: int, offset: int) -> int:
        before, after = call.pads(d) or (0, 0)
        step = out_steps[d]
        room(offset, before, step)
        offset = a.add_u64(offset, a.mul_u64(before, step, "loops.before"), "loops.offset")
        if d >= last:
            copy = a.mul_u64(in_steps[d], sizes[d], "loops.copy")
            room(offset, copy, 1)
            offset = a.add_u64(offset, copy, "loops.offset")
        elif sizes[d] > 0:
            # Each iteration starts one step further: the last one has the least room,
            # and every guard passes with more room where it passes with less.
            last_start = a.mul_u64(a.sub_u64(sizes[d], 1, "loops.last"), step, "loops.iter")
            walk(d + 1, a.add_u64(offset, last_start, "loops.offset"))
            offset = a.add_u64(offset, a.mul_u64(sizes[d], step, "loops.iter"), "loops.offset")
        room(offset, after, step)
        return offset

    walk(0, 0)


CHECKS = {
    "dtypes": ("dtype.mismatch",),
    "ranks": ("rank.out",),
    "pad_length": ("pad.odd_length", "pad.too_long"),
    "pad_range": ("pad.range",),
    "same_dim_order": ("dim_order.in_out",),
    "resize_out": ("out.resize",),
    "value": ("value.overflow",),
    "padding_loops": ("out.too_small",),
}

STEPS = (
    dtypes,
    ranks,
    pad_length,
    pad_range,
    same_dim_order,
    output_sizes,
    resize_out,
    out_strides,
    value,
    last_padded_dim,
    padding_loops,
)
LOOP_STEPS = frozenset({"last_padded_dim", "padding_loops"})
