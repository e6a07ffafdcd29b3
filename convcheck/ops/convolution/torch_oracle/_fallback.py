"""``check_shape_forward`` and ``_select_conv_backend`` in Python.

Used when this torch has no ``torch._C._select_conv_backend`` (a private API): the same
checks in the same order with the same int64 wrapping, and the same backend choice for
a CPU build (``Convolution.cpp`` of torch 2.13). The tests hold it to the private API
and to real CPU.
"""

from __future__ import annotations

from convcheck.fixedint import INT64_MAX
from convcheck.ops.convolution.torch_oracle import _torch
from convcheck.ops.convolution.torch_oracle.aten import TorchError, fmt_sizes, fmt_x, kernel_extent


def check_shape_forward(call) -> None:
    case, p, a = call.case, call.params, call.a
    in_sizes, w_sizes = call.in_sizes, call.w_sizes
    k, weight_dim, groups = len(in_sizes), len(w_sizes), p.groups
    if any(v < 0 for v in p.padding):
        raise TorchError("negative padding is not supported")
    if any(v < 0 for v in p.output_padding):
        raise TorchError("negative output_padding is not supported")
    if any(v <= 0 for v in p.stride):
        raise TorchError("non-positive stride is not supported")
    if any(v < 0 for v in p.dilation):
        raise TorchError("dilation should be greater than zero")
    if groups <= 0:
        raise TorchError(f"expected groups to be greater than 0, but got groups={groups}")
    if weight_dim != k:
        raise TorchError(
            f"Expected {weight_dim}-dimensional input for {weight_dim}-dimensional weight "
            f"{fmt_sizes(w_sizes)}, but got {k}-dimensional input of size "
            f"{fmt_sizes(in_sizes)} instead"
        )
    if w_sizes[0] < groups:
        raise TorchError(
            f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, "
            f"but got weight of size {fmt_sizes(w_sizes)} instead"
        )
    # C's ``%`` (ATen's C++), through the arithmetic: the solver runs these checks too.
    if a.rem_i64(w_sizes[0], groups, "check_shape_forward.groups_rem") != 0:
        raise TorchError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at "
            f"dimension 0, but got weight of size [{fmt_sizes(w_sizes)}] instead"
        )
    bias = case.bias

    if not p.transposed:
        channels = a.mul_i64(w_sizes[1], groups, "check_shape_forward.channels")
        if in_sizes[1] != channels:
            raise TorchError(
                f"Given groups={groups}, weight of size {fmt_sizes(w_sizes)}, expected "
                f"input{fmt_sizes(in_sizes)} to have {channels} channels, but got "
                f"{in_sizes[1]} channels instead"
            )
        if bias is not None and not (bias.rank == 1 and bias.sizes[0] == w_sizes[0]):
            raise TorchError(
                f"Given weight of size {fmt_sizes(w_sizes)}, expected bias to be 1-dimensional "
                f"with {w_sizes[0]} elements, but got bias of size {fmt_sizes(bias.sizes)} "
                "instead"
            )
        input_shape, kernel_shape = [], []
        for i in range(2, k):
            padding_bound_at(a, p, i)
            site = f"check_shape_forward.dim{i - 2}"
            input_shape.append(a.add_i64(in_sizes[i], a.mul_i64(2, p.padding[i - 2], site), site))
            kernel_shape.append(kernel_extent(a, p.dilation[i - 2], w_sizes[i], site))
        if any(x < kk for x, kk in zip(input_shape, kernel_shape, strict=True)):
            raise TorchError(
                f"Calculated padded input size per channel: ({fmt_x(input_shape)}). Kernel "
                f"size: ({fmt_x(kernel_shape)}). Kernel size can't be greater than actual "
                "input size"
            )
    else:
        for i in range(2, k):
            padding_bound_at(a, p, i)
        if in_sizes[1] != w_sizes[0]:
            raise TorchError(
                f"Given transposed=1, weight of size {fmt_sizes(w_sizes)}, expected "
                f"input{fmt_sizes(in_sizes)} to have {w_sizes[0]} channels, but got "
                f"{in_sizes[1]} channels instead"
            )
        channels = a.mul_i64(w_sizes[1], groups, "check_shape_forward.bias_channels")
        if bias is not None and not (bias.rank == 1 and bias.sizes[0] == channels):
            raise TorchError(
                f"Given transposed=1, weight of size {fmt_sizes(w_sizes)}, expected bias to "
                f"be 1-dimensional with {channels} elements, but got bias of size "
                f"{fmt_sizes(bias.sizes)} instead"
            )


def padding_bound_at(a, p, i: int) -> None:
    # padding >= 0 here (checked first), so the subtraction cannot overflow.
    if p.padding[i - 2] > a.sub_i64(INT64_MAX, p.padding[i - 2], f"padding_bound.dim{i - 2}"):
        raise TorchError(
            f"Given padding={p.padding[i - 2]} at dimension {i - 2} , expected padding to be "
            f"at most {INT64_MAX // 2}"
        )


def shape_checks(call):
    """Every check before a backend is chosen: ``check_shape_forward``, then
    ``_select_conv_backend``'s own check of the input's empty dims. Returns the sizes and
    parameters as the choice sees them (a 1-D call viewed as 2-D), and whether the call
    goes to the Empty backend (N == 0 or C == 0). The solver runs this symbolically
    (``convcheck.ops.convolution.against_torch``): values are compared, never turned into
    ints."""
    check_shape_forward(call)
    in_sizes, w_sizes, p = call.in_sizes, call.w_sizes, call.params
    if call.one_d:
        in_sizes = [in_sizes[0], in_sizes[1], 1, in_sizes[2]]
        w_sizes = [w_sizes[0], w_sizes[1], 1, w_sizes[2]]
        p = p.view1d_as_2d()
    if in_sizes[0] == 0 or in_sizes[1] == 0:
        return in_sizes, w_sizes, p, True
    if any(s == 0 for s in in_sizes):
        raise TorchError(
            "Only zero batch or zero channel inputs are supported, but got input shape: "
            f"{fmt_sizes(in_sizes)}"
        )
    return in_sizes, w_sizes, p, False


def _use_mkldnn(call, in_sizes, w_sizes, p) -> bool:
    if not call.onednn:
        return False
    support = _torch.onednn_support()
    if not support["available"]:
        return False
    if p.transposed and p.is_output_padding_big():
        return False
    if (call.dtype == "bfloat16" and support["bf16"]) or (
        call.dtype == "float16" and support["fp16"]
    ):
        return True
    if call.dtype != "float32":
        return False
    n = in_sizes[0]
    first = (
        p.is_strided()
        or p.is_dilated()
        or n >= 16
        or w_sizes[-1] != 1
        or w_sizes[-2] != 1
        or call.threads > 1
    )
    nchw = call.a.mul_i64(
        call.a.mul_i64(
            call.a.mul_i64(in_sizes[0], in_sizes[1], "use_mkldnn"), in_sizes[2], "use_mkldnn"
        ),
        in_sizes[3],
        "use_mkldnn",
    )
    second = p.groups > 1 or (w_sizes[-1] > 3 and w_sizes[-2] > 3) or n > 1 or nchw > 20480
    return first and second


def _use_nnpack(call, in_sizes, w_sizes, p) -> bool:
    """Only reached when oneDNN was not chosen: float32 2-D, batch >= 16, small kernels."""
    torch = _torch.torch_module()
    return (
        bool(torch._C._get_nnpack_enabled())
        and bool(torch._nnpack_available())
        and call.dtype == "float32"
        and not p.is_dilated()
        and not p.transposed
        and len(in_sizes) == 4
        and len(w_sizes) == 4
        and w_sizes[2] < 17
        and w_sizes[3] < 17
        and p.padding[0] < w_sizes[2]
        and p.padding[1] < w_sizes[3]
        and in_sizes[0] >= 16
    )


def select_backend(call) -> str:
    """``check_shape_forward`` then ``_select_conv_backend`` for a CPU input."""
    in_sizes, w_sizes, p, empty = shape_checks(call)
    if empty:
        return "Empty"
    ndim = len(in_sizes)
    if _use_mkldnn(call, in_sizes, w_sizes, p):
        return "MkldnnTranspose" if p.transposed else "Mkldnn"
    if not p.transposed and ndim == 5 and not p.is_dilated():
        return "Slow3d"
    if p.transposed:
        if ndim == 4:
            return "SlowTranspose2d"
        if ndim == 5:
            return "SlowTranspose3d"
    elif ndim == 4:
        if p.is_dilated():
            return "SlowDilated2d"
        return "NnpackSpatial" if _use_nnpack(call, in_sizes, w_sizes, p) else "Slow2d"
    elif ndim == 5:
        return "SlowDilated3d"
    raise TorchError("unsupported ConvNd parameters")
