"""The steps of ``legacy`` both pooling kernels run: ``kernel_ops_util``'s helpers as
ExecuTorch main cff6f4dd32 has them (``param_array_is_valid`` and its callers,
``_kernel_output_size_helper``, ``kernel_reduction_then_map_2d``'s arithmetic), bugs
included."""

from __future__ import annotations

import math

from convcheck.fixedint import INT64_MAX, INT64_MIN, Arith
from convcheck.ops.pooling.checks import Call, ceil_mode_last_window, val_at, window
from convcheck.steps import Reject


def param_array(name: str, values: tuple[int, ...], minimum: int, allow_empty: bool) -> None:
    """``param_array_is_valid`` for two spatial dims: length 1 or 2 (or 0 when allowed),
    every element at least ``minimum``; no upper bound."""
    if len(values) not in ((0, 1, 2) if allow_empty else (1, 2)):
        raise Reject(f"{name}.length")
    if any(v < minimum for v in values):
        raise Reject(f"{name}.range")


def kernel_size(call: Call, a: Arith) -> None:
    param_array("kernel_size", call.kernel_size, 1, allow_empty=False)


def stride(call: Call, a: Arith) -> None:
    """``stride_is_valid(kernel_size, 2, true)``: the kernel size is checked a second
    time under the stride's name, so the stride itself never is (and these ids never
    fire: the kernel size passed the same test just before)."""
    param_array("stride", call.kernel_size, 1, allow_empty=True)


def padding(call: Call, a: Arith) -> None:
    """At least 0 and at most half the kernel (the undilated one), no other bound."""
    param_array("padding", call.padding, 0, allow_empty=False)
    for i, pad in enumerate(call.padding):
        half = a.div_i64(val_at(call.kernel_size, i), 2, f"padding.dim{i}.half_kernel")
        if pad > half:
            raise Reject("padding.gt_half_kernel")


def dilation(call: Call, a: Arith) -> None:
    """``dilation_is_valid(kernel_size, 2)``: the kernel size again, so the dilation is
    never checked either."""
    param_array("dilation", call.kernel_size, 1, allow_empty=False)


def output_sizes(call: Call, a: Arith) -> None:
    """``get_*_out_target_size``: the leading sizes copied, each spatial one from
    ``_kernel_output_size_helper`` in int64, stored into the int32 size type."""
    sizes = list(call.input.sizes[:-2])
    for i in range(2):
        k, s, p, d = window(call, i)
        size = output_size(
            a, f"output_sizes.dim{i}", call.input.sizes[-2 + i], k, p, s, d, call.ceil_mode
        )
        sizes.append(a.narrow_i32(size, f"output_sizes.dim{i}.narrow"))
    call.out_sizes = sizes


def output_size(
    a: Arith, site: str, n: int, k: int, p: int, s: int, d: int, ceil_mode: bool
) -> int:
    """``_kernel_output_size_helper`` with ``transposed`` false. The input size is a
    ``size_t``: the numerator's ``+``/``-`` are unsigned (they wrap, defined), its int64
    terms converted; ``2 * pad``, ``dilation * (kernel - 1)`` and ``stride - 1`` are int64
    (UB on overflow); the sum goes back to int64 and divides by the stride (by 0 when it
    is 0, truncating toward zero otherwise). ``ceil_mode`` drops the last window when it
    starts past the padded input, in int64."""
    two_pad = a.mul_i64(2, p, f"{site}.two_pad")
    kernel_minus_1 = a.sub_i64(k, 1, f"{site}.kernel_minus_1")
    dilated = a.mul_i64(d, kernel_minus_1, f"{site}.dilated_kernel")
    t = a.add_u64(n, a.i64_to_u64(two_pad, f"{site}.two_pad_u"), f"{site}.plus_two_pad")
    t = a.sub_u64(t, a.i64_to_u64(dilated, f"{site}.dilated_u"), f"{site}.minus_dilated")
    t = a.sub_u64(t, 1, f"{site}.minus_1")
    if ceil_mode:
        stride_minus_1 = a.sub_i64(s, 1, f"{site}.stride_minus_1")
        t = a.add_u64(t, a.i64_to_u64(stride_minus_1, f"{site}.ceil_u"), f"{site}.plus_ceil")
    numerator = a.u64_to_i64(t, f"{site}.numerator")
    quotient = a.div_i64(numerator, s, f"{site}.div_stride")
    size = a.add_i64(quotient, 1, f"{site}.plus_1")
    return ceil_mode_last_window(a, site, size, n, p, s) if ceil_mode else size


def pool_size(call: Call, a: Arith) -> None:
    """avg_pool2d's divisor with ``count_include_pad`` and no ``divisor_override``: the
    padded window's area, ``(ih1 - ih0) * (iw1 - iw0)`` in int64, for the first and the
    last window (those that bound it). The C computes it for every window; only its use
    as the divisor survives the compiler, as measured: otherwise the sanitized kernel
    reports nothing here (and loops on). legacy's loops put ``idle_taps`` between the
    two (``first_pool_size``, ``last_pool_size``)."""
    if _divides_by_area(call):
        _padded_area(call, a, "first")
        _padded_area(call, a, "last")


def first_pool_size(call: Call, a: Arith) -> None:
    if _divides_by_area(call):
        _padded_area(call, a, "first")


def last_pool_size(call: Call, a: Arith) -> None:
    if _divides_by_area(call):
        _padded_area(call, a, "last")


def _divides_by_area(call: Call) -> bool:
    """With ``count_include_pad`` and no ``divisor_override``, on a call that has
    windows. Where the area divides nothing the compiler drops it, overflow and all
    (measured on the checkout: no report, and the loops run on)."""
    return (
        call.count_include_pad
        and getattr(call.case, "divisor_override", None) is None
        and not any(size == 0 for size in call.out_sizes)
    )


def _padded_area(call: Call, a: Arith, which: str) -> None:
    extents = []
    for i in range(2):
        k, s, p, _ = window(call, i)
        site = f"loops.{which}_window.dim{i}"
        last = call.out_sizes[-2 + i]
        out_index = 0 if which == "first" else a.sub_i64(last, 1, f"{site}.last_index")
        # ``out_y * s_H``: a size_t times an int64, so unsigned; stored into int64.
        start = a.u64_to_i64(
            a.mul_u64(out_index, a.i64_to_u64(s, f"{site}.stride_u"), f"{site}.times_stride"),
            f"{site}.start_i64",
        )
        start = a.sub_i64(start, p, f"{site}.minus_pad")
        end = min(
            a.add_i64(start, k, f"{site}.plus_kernel"),
            a.add_i64(call.input.sizes[-2 + i], p, f"{site}.input_plus_pad"),
        )
        extents.append(a.sub_i64(end, start, f"{site}.extent"))
    a.mul_i64(extents[0], extents[1], "loops.pool_size")


# The most out elements of a call whose values a run computes (``RunLimits``'s
# ``max_out_elements``): past it the run entry is not called.
WALKED_OUT_ELEMENTS = 1 << 16


def window_sums(call: Call, a: Arith) -> None:
    """avg_pool2d's sums and quotients on an int64 input filled with ``int64_fill``
    (``AvgPool2dCase``): each window's sum in int64, then its quotient by the divisor
    (the override, the padded area, or the taps that read), as the loops compute them,
    window by window. Windows alike (the same padded extent and reads in each dim) give
    the same values, so each pair of dim profiles is walked once, in the order the loops
    first reach it. The small values of an unfilled run overflow nothing; nor is a call
    walked whose out is larger than any run computes values for (``WALKED_OUT_ELEMENTS``):
    its windows would take long to walk, for no run."""
    fill = getattr(call.case, "int64_fill", None)
    if fill is None or call.input.dtype != "int64":
        return  # the solver's case among them: its sizes are symbolic, its fill absent
    if not 0 < math.prod(call.out_sizes) <= WALKED_OUT_ELEMENTS:
        return
    by_area = _divides_by_area(call)
    override = getattr(call.case, "divisor_override", None)
    events = len(a.ub)
    rows, columns = dim_profiles(call, 0), dim_profiles(call, 1)
    for extent_y, reads_y in rows:
        for extent_x, reads_x in columns:
            # The area comes first, for every window; a window reading nothing is skipped.
            area = a.mul_i64(extent_y, extent_x, "loops.pool_size") if by_area else 0
            if reads_y > 0 and reads_x > 0:
                reads = reads_y * reads_x
                total = _window_sum(a, fill, reads)
                divisor = override if override is not None else area if by_area else reads
                a.div_i64(total, divisor, "loops.divide")
            if len(a.ub) > events:
                return


def dim_profiles(call: Call, i: int) -> list[tuple[int, int]]:
    """Dim ``i``'s windows as (padded extent, taps that read), distinct, in the order of
    the output positions that first have them. The loops' start is ``o * s`` in size_t,
    stored into int64, less the padding; the window ends at the kernel's end or the
    padded input's, whichever is first; its reads are the taps inside the input."""
    k, s, p, _ = window(call, i)
    n = call.input.sizes[-2 + i]
    profiles: dict[tuple[int, int], None] = {}
    for o in range(call.out_sizes[-2 + i]):
        start = (o * s - INT64_MIN) % 2**64 + INT64_MIN - p  # the size_t product as int64
        end = min(start + k, n + p)
        profiles[(end - start, max(0, min(end, n) - max(start, 0)))] = None
    return list(profiles)


def _window_sum(a: Arith, fill: int, reads: int) -> int:
    """``reads`` elements of ``fill`` summed in int64 from the first: the add that first
    leaves int64, or the last add."""
    past = INT64_MAX // fill + 1 if fill > 0 else -INT64_MIN // -fill + 1 if fill < 0 else reads
    adds = min(reads, past)
    return fill if adds < 2 else a.add_i64(fill, (adds - 1) * fill, "loops.plus")


# Taps outside the input in one window past which our kernel halts its run ("work past
# limit", pool_taps.h): ExecuTorch's loops spin on them, seconds to hours, where ATen's
# visit only the taps inside.
IDLE_TAPS_LIMIT = 1 << 32


def idle_taps(call: Call, a: Arith) -> None:
    """The loops visit all ``k_h * k_w`` taps of every window, inside the input or not
    (input 1x1, kernel 2^20, padding 2^19: 2^40 iterations, one of which reads). Our
    kernel counts the first window's taps outside the input before visiting any, after
    its padded area, and halts past the limit."""
    a.idle_iterations("loops.idle_taps", lambda: first_window_idle(call), IDLE_TAPS_LIMIT)


def first_window_idle(call: Call) -> int:
    """The first window's taps outside the input; 0 when there is no window."""
    if any(size == 0 for size in call.out_sizes):
        return 0
    taps = inside = 1
    for i in range(2):
        k, _, p, d = window(call, i)
        taps *= k
        inside *= first_window_inside(k, p, d, call.input.sizes[-2 + i])
    return taps - inside


def first_window_inside(k: int, p: int, d: int, n: int) -> int:
    """The taps t in [0, k) of a dim's first window (it starts at -p, a tap every d) with
    0 <= t * d - p < n. An accepted call's padding is at least 0, its input size at least
    1; a dilation of 0 or below (legacy's is unchecked) keeps every tap at -p or left."""
    if d <= 0:
        return 0 if p != 0 else (k if d == 0 else 1)
    first = -(-p // d)
    last = min(k - 1, (p + n - 1) // d)
    return max(0, last - first + 1)


CHECKS = {
    "kernel_size": ("kernel_size.length", "kernel_size.range"),
    "stride": ("stride.length", "stride.range"),
    "padding": ("padding.length", "padding.range", "padding.gt_half_kernel"),
    "dilation": ("dilation.length", "dilation.range"),
}
