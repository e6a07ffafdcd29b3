"""What both revisions of convolution share: the call as the C sees it, the predicates
and checks the C shares between them, and the tail of ``convolution_out``."""

from __future__ import annotations

from collections.abc import Sequence

from convcheck.case import TensorSpec, channels_last_order, contiguous_order
from convcheck.fixedint import Arith
from convcheck.ops.convolution.case import ConvolutionCase
from convcheck.steps import Accept, Reject, Step, either


class Call:
    """The arguments as the C sees them, plus what the steps compute on the way. (Read
    once from the case: the steps read them several hundred times a run.)"""

    def __init__(self, case: ConvolutionCase) -> None:
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


# -- predicates and helpers the C shares between checks ---------------------------------


def is_contiguous(t: TensorSpec) -> bool:
    return t.order == contiguous_order(t.rank)


def is_channels_last(t: TensorSpec) -> bool:
    """ExecuTorch defines channels-last only for 4-D and 5-D tensors."""
    return t.rank in (4, 5) and t.order == channels_last_order(t.rank)


def is_default_or_channels_last(t: TensorSpec) -> bool:
    return is_contiguous(t) or is_channels_last(t)


def check_layouts(**tensors: TensorSpec) -> None:
    """Rejects with ``dim_order.<name>`` the first of ``tensors`` in neither layout the
    portable kernels are written for."""
    for name, t in tensors.items():
        if not is_default_or_channels_last(t):
            raise Reject(f"dim_order.{name}")


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


def check_output_padding_below_stride_or_dilation(call: Call) -> None:
    case = call.case
    for i in range(call.ndim):
        op = val_at(case.output_padding, i)
        if not either(op < val_at(case.stride, i), op < val_at(case.dilation, i)):
            raise Reject("output_padding.too_large")


def param_steps(maximum: int | None) -> tuple[Step, Step, Step, Step]:
    """The steps stride, padding, dilation and output_padding, which the revisions tell
    apart only by the upper bound (``maximum``; None: none) each revision says why it has.

    The lower bounds are the same: stride >= 1, as the regular output size divides by it;
    padding >= 0, as a negative one would crop the input; dilation >= 1, as 0 would put
    every kernel tap on one input element; output_padding >= 0 (transposed calls only),
    as it only adds output positions, and below the stride or the dilation of its dim.
    """

    def stride(call: Call, a: Arith) -> None:
        check_param_array("stride", call.case.stride, call.ndim, 1, maximum)

    def padding(call: Call, a: Arith) -> None:
        check_param_array("padding", call.case.padding, call.ndim, 0, maximum)

    def dilation(call: Call, a: Arith) -> None:
        check_param_array("dilation", call.case.dilation, call.ndim, 1, maximum)

    def output_padding(call: Call, a: Arith) -> None:
        if not call.transposed:
            return
        check_param_array("output_padding", call.case.output_padding, call.ndim, 0, maximum)
        check_output_padding_below_stride_or_dilation(call)

    return stride, padding, dilation, output_padding


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


def numel_fits(sizes: Sequence[int], a: Arith, site: str, check: str) -> None:
    """The tensor library refuses sizes whose element count does not fit its ssize_t
    (with ``check``); the multiply by dim d is site ``<site>.numel_mul<d>``."""
    numel = 1
    for d, size in enumerate(sizes):
        product = a.mul_checked_i64(numel, size, f"{site}.numel_mul{d}")
        if product is None:
            raise Reject(check)
        numel = product


def resize_out(call: Call, a: Arith) -> None:
    numel_fits(call.out_sizes, a, "resize_out", "out.resize")


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
