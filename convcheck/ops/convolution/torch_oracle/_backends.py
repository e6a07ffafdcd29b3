"""Step 4 of ATen's check path (``_checks``): each backend's own checks, as in torch 2.13.

Once ``check_shape_forward`` has passed and ``_select_conv_backend`` has chosen a backend,
the call goes to that backend's kernel, and each kernel checks again in its own way:
its own dtype rules, its own output-size formula (some in 32-bit ``int``), its own
buffers to allocate. Those checks are what this module models, one function per backend
in ``BACKEND_CHECKS``, written from the 2.13 sources (``mkldnn/Conv.cpp``, ideep and
oneDNN's descriptor checks, ``ConvolutionMM2d.cpp``, ``ConvolutionMM3d.cpp``,
``NaiveDilatedConvolution.cpp``, ``NaiveConvolutionTranspose{2,3}d.cpp``, ``NNPACK.cpp``,
``Convolution.cpp``'s Empty path) and held to real CPU by ``tests/torch``. Each takes the
call after the 1-D to 2-D view and returns the output sizes, or raises ``TorchError`` with
torch's message, or ``PredictedCrash`` where torch is known to crash (never run).

The backends' own checks, in the order each makes them:

============== ==========================================================================
Empty          N == 0 or C == 0: ``weight.view(-1)[0]`` (an empty weight fails), the
               input times it (dtype promotion), ``bias[0]`` added in place (an empty
               bias fails, a float bias on an integer output fails), a view to
               ``calc_output_size`` (negative sizes fail; below -2^62 not a SymInt)
Mkldnn         input/weight/bias types equal; dilation > 0; oneDNN: rank <= 5, output
               >= 1, kernel dims >= 1, its size formula (see ``_onednn_refuses``)
MkldnnTranspose input/weight/bias types equal; oneDNN: rank <= 5 (f32: segfault),
               output >= 0, weight not empty, ideep drops every dilation if one is 0
               (3-D: "dimensions are invalid"), the size formula
NnpackSpatial  weight and bias float32 (f32, 2-D, batch >= 16, oneDNN off)
Slow2d         kernel > 0; output >= 1 by ``div_rtn`` (32-bit quotient and remainder),
               the output sized by int64 division; dispatch (no bool); weight dtype
SlowDilated2/3d kernel > 0, stride > 0, dilation > 0; output >= 0 (``div_rtn``: its
               quotient and remainder are 32-bit);
               allocation; dispatch (floats and int64 only); weight dtype
Slow3d         kernel > 0; padding <= 2^61 (ValueError); output >= 1 (``div_rtn``);
               dispatch (no bool); allocation; weight dtype
SlowTranspose  parameters cut to 32-bit ``int``: kernel > 0 (2-D only), stride > 0,
2/3d           dilation > 0, output_padding < stride or < dilation; weight not empty;
               output >= 1 computed from the cut values; the output sized with the int64
               values (allocation); dispatch (floats and int64 only); weight dtype; bias:
               2-D adds in place (castable), 3-D reads it as the input's dtype
============== ==========================================================================

The slow kernels without native groups run once a group, on group-sized tensors.

Not modelled: failures of intermediate buffers other than the im2col columns, and of
memory itself.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from convcheck.fixedint import Wrapping
from convcheck.ops.convolution.case import ConvolutionCase
from convcheck.ops.convolution.torch_oracle import _torch
from convcheck.ops.convolution.torch_oracle.aten import (
    SYMINT_MIN,
    Params,
    TorchError,
    calc_output_size,
    check_output_allocatable,
    conv_input_size,
    conv_output_size,
    div_rtn,
    fmt_sizes,
    fmt_x,
    kernel_extent,
    storage_problem,
)

FLOATING = ("float32", "float64", "float16", "bfloat16")
# AT_DISPATCH_ALL_TYPES_AND2(BFloat16, Half) and AT_DISPATCH_FLOATING_TYPES_AND3(Long, ...)
ALL_TYPES = (*FLOATING, "uint8", "int8", "int16", "int32", "int64")
FLOATING_AND_LONG = (*FLOATING, "int64")
SCALAR_NAME = {
    "float32": "Float",
    "float64": "Double",
    "float16": "Half",
    "bfloat16": "BFloat16",
    "uint8": "Byte",
    "int8": "Char",
    "int16": "Short",
    "int32": "Int",
    "int64": "Long",
    "bool": "Bool",
}
# Tensor::toString() as oneDNN's type check prints it.
LEGACY_TYPE = {
    "float32": "torch.FloatTensor",
    "float64": "torch.DoubleTensor",
    "float16": "torch.HalfTensor",
    "bfloat16": "CPUBFloat16Type",
    "uint8": "torch.ByteTensor",
    "int8": "torch.CharTensor",
    "int16": "torch.ShortTensor",
    "int32": "torch.IntTensor",
    "int64": "torch.LongTensor",
    "bool": "CPUBoolType",
}
PREDICTED_CRASH = "SIGSEGV"


@dataclass
class AtenCall:
    """One call as ATen sees it after the 1-D to 2-D view: sizes, dtypes, params."""

    case: ConvolutionCase
    a: Wrapping
    in_sizes: list[int]
    w_sizes: list[int]
    params: Params
    one_d: bool
    threads: int
    onednn: bool
    backend: str = ""

    @property
    def dtype(self) -> str:
        return self.case.input.dtype

    @property
    def w_dtype(self) -> str:
        return self.case.weight.dtype

    @property
    def b_dtype(self) -> str | None:
        return None if self.case.bias is None else self.case.bias.dtype

    @property
    def spatial(self) -> list[int]:
        return self.in_sizes[2:]

    @property
    def kernel(self) -> list[int]:
        return self.w_sizes[2:]

    def per_group_weight(self) -> list[int]:
        """The weight of one group, as the slow kernels (called once a group) see it."""
        w = list(self.w_sizes)
        if self.params.groups > 1 and not self.backend.startswith("Slow3d"):
            w[0] //= self.params.groups
        return w


class PredictedCrash(Exception):
    """A call on which torch is known to crash: predicted, never run."""

    def __init__(self, site: str, detail: str) -> None:
        super().__init__(detail)
        self.site = site
        self.detail = detail


def _empty(call: AtenCall) -> list[int]:
    """``ConvBackend::Empty``, run for real on tensors that hold no memory.

    output = C == 0 ? input.view(-1) * weight.view(-1) : input * weight.view(-1)[0];
    output.add_(bias[0]); output.view(calc_output_size(...)).
    """
    torch = _torch.torch_module()
    case = call.case
    w_numel = 1
    for s in call.w_sizes:
        w_numel *= s
    w_dtype = _torch.torch_dtype(call.w_dtype)
    try:
        # the input itself, laid out as the case says: it holds no element
        inp = _torch.empty_like_spec(case.input)
        if call.one_d:
            inp = inp.contiguous().unsqueeze(2)  # view4d after input.contiguous()
        if call.in_sizes[1] == 0:
            if w_numel not in (0, 1):
                raise TorchError(
                    f"The size of tensor a (0) must match the size of tensor b ({w_numel}) "
                    "at non-singleton dimension 0"
                )
            out = inp.view(-1) * torch.zeros(w_numel, dtype=w_dtype)
        else:
            if w_numel == 0:
                raise TorchError(
                    "select(): index 0 out of range for tensor of size [0] at dimension 0",
                    "IndexError",
                )
            out = inp * torch.zeros((), dtype=w_dtype)
        if case.bias is not None:
            if case.bias.numel == 0:
                raise TorchError(
                    "select(): index 0 out of range for tensor of size [0] at dimension 0",
                    "IndexError",
                )
            out.add_(torch.zeros((), dtype=_torch.torch_dtype(case.bias.dtype)))
        sizes = calc_output_size(call.a, call.in_sizes, call.w_sizes, call.params)
        for s in sizes:  # ATen's view(IntArrayRef) converts to SymInts first
            if s < SYMINT_MIN:
                raise TorchError(
                    f"IntArrayRef contains an int that cannot be represented as a SymInt: {s}"
                )
        out = out.view(sizes)
    except (RuntimeError, IndexError, ValueError) as e:
        raise TorchError(str(e), type(e).__name__) from None
    return list(out.shape)


def _type_check_onednn(call: AtenCall) -> None:
    """``check_input_same_type_as_parameters(input, weight, bias, backend)``."""
    if call.w_dtype != call.dtype:
        raise TorchError(
            f"Input type ({LEGACY_TYPE[call.dtype]}) and weight type "
            f"({LEGACY_TYPE[call.w_dtype]}) should be the same or input should be a MKLDNN "
            "tensor and weight is a dense tensor"
        )
    if call.b_dtype is not None and call.b_dtype != call.dtype:
        raise TorchError(
            f"Input type ({LEGACY_TYPE[call.dtype]}) and bias type "
            f"({LEGACY_TYPE[call.b_dtype]}) should be the same or input should be a MKLDNN "
            "tensor and bias is a dense tensor"
        )


def _onednn_refuses(call: AtenCall, out: list[int], transposed: bool) -> None:
    """What ideep and oneDNN refuse when the primitive is created (oneDNN 3.x).

    * an input of rank above 5 (f32 regular: a ``std::vector`` error; f32 transposed: a
      segfault, never run; other dtypes: a refused primitive);
    * a negative output size (the memory descriptor), or a regular one below 1;
    * an empty weight (a kernel dim of 0, or no output channel);
    * ideep's ``get_compatible_dilates``: when any dilation is <= 0 it drops them all
      (every dim undilated), and for 3-D gives two dims instead of three ("dimensions
      are invalid");
    * oneDNN's ``deconv_desc_init`` / ``conv_desc_init``: the sizes must satisfy
      ``(dst - ker_range + pad_l + pad_r) / stride + 1 == src`` (deconvolution; the
      convolution's is the same with src and dst swapped), with
      ``ker_range = 1 + (k - 1) * (dilation' + 1)``, ``dilation' = dilation - 1`` and,
      transposed, ``pad_r = padding - output_padding``, and ``pad_r + stride > 0``, all
      in wrapping int64. ATen sizes the output with the same formula, so this holds
      unless ideep dropped the dilations or the int64 arithmetic wrapped.
    """
    name = "deconvolution" if transposed else "convolution"
    refuse = TorchError(
        f"could not create a primitive descriptor for the {name} forward propagation "
        "primitive. Run workload with environment variable ONEDNN_VERBOSE=all to get "
        "additional diagnostic information."
    )
    if len(call.in_sizes) > 5:
        if not transposed and call.dtype == "float32":
            raise TorchError("cannot create std::vector larger than max_size()", "ValueError")
        if transposed and call.dtype == "float32":
            raise PredictedCrash(
                "mkldnn_convolution_transpose.rank>5",
                "predicted, not run: oneDNN transposed convolution with an input of rank "
                f"{len(call.in_sizes)} segfaults in torch 2.13",
            )
        raise refuse
    spatial = out[2:]
    if any(s < 0 for s in spatial) or (not transposed and any(s < 1 for s in spatial)):
        raise TorchError("could not construct a memory descriptor using a format tag")
    # the descriptor's strides: products of the dims, an empty dim counting as 1
    if storage_problem([max(s, 1) for s in out], call.dtype) is not None:
        raise TorchError("could not construct a memory descriptor using a format tag")
    if any(k == 0 for k in call.kernel) or call.w_sizes[1] == 0:
        raise refuse
    p = call.params
    if any(d <= 0 for d in p.dilation):
        if len(spatial) == 3:
            raise TorchError("dimensions are invalid")
        dilation = [0] * len(spatial)
    else:
        dilation = [d - 1 for d in p.dilation]
    a = call.a
    for i, (x, k) in enumerate(zip(call.spatial, call.kernel, strict=True)):
        site = f"onednn.desc_init.dim{i}"
        s, pad_l = p.stride[i], p.padding[i]
        pad_r = a.sub_i64(pad_l, p.output_padding[i], site) if transposed else pad_l
        span = a.mul_i64(a.sub_i64(k, 1, site), a.add_i64(dilation[i], 1, site), site)
        ker_range = a.add_i64(1, span, site)
        src, dst = (x, spatial[i]) if transposed else (spatial[i], x)
        # oneDNN's dim_t arithmetic wraps like ATen's: stride 2^63 - 1 with a padding
        # makes pad_r + stride negative.
        if dilation[i] < 0 or pad_l < 0 or a.add_i64(pad_r, s, site) <= 0:
            raise refuse
        extent = a.add_i64(a.add_i64(a.sub_i64(dst, ker_range, site), pad_l, site), pad_r, site)
        if a.add_i64(a.div_i64(extent, s, site), 1, site) != src:
            raise refuse


def _mkldnn(call: AtenCall) -> list[int]:
    """``ConvBackend::Mkldnn``: oneDNN's forward convolution (``mkldnn/Conv.cpp``)."""
    _type_check_onednn(call)
    # mkldnn's own check_shape_forward: everything else was checked before.
    if any(d <= 0 for d in call.params.dilation):
        raise TorchError("non-positive dilation is not supported")
    out = conv_output_size(call.a, call.in_sizes, call.w_sizes, call.params)
    _onednn_refuses(call, out, transposed=False)
    check_output_allocatable(out, call.dtype)
    return out


def _mkldnn_transpose(call: AtenCall) -> list[int]:
    """``ConvBackend::MkldnnTranspose``: oneDNN's deconvolution; no shape checks of its own."""
    _type_check_onednn(call)
    out = conv_input_size(call.a, call.in_sizes, call.w_sizes, call.params)
    _onednn_refuses(call, out, transposed=True)
    check_output_allocatable(out, call.dtype)
    return out


def _dispatch(call: AtenCall, name: str, dtypes: tuple[str, ...]) -> None:
    """``AT_DISPATCH_...``: no kernel for the input's dtype."""
    if call.dtype not in dtypes:
        raise TorchError(
            f"\"{name}\" not implemented for '{SCALAR_NAME[call.dtype]}'", "NotImplementedError"
        )


def _data_ptr(call: AtenCall, dtype: str | None) -> None:
    """``tensor.data_ptr<scalar_t>()`` / ``accessor<scalar_t>``: the dtype must be the input's."""
    if dtype is not None and dtype != call.dtype:
        raise TorchError(
            f"expected scalar type {SCALAR_NAME[call.dtype]} but found {SCALAR_NAME[dtype]}"
        )


def _add_in_place(call: AtenCall, bias_dtype: str | None) -> None:
    """``output.add_(bias)``: the promoted type must cast back to the output's."""
    if bias_dtype is None:
        return
    result = _uncastable_promotion(call.dtype, bias_dtype)
    if result is not None:
        raise TorchError(
            f"result type {SCALAR_NAME[result]} can't be cast "
            f"to the desired output type {SCALAR_NAME[call.dtype]}"
        )


@functools.cache
def _uncastable_promotion(out_dtype: str, bias_dtype: str) -> str | None:
    """The dtype ``output.add_(bias)`` promotes to where it cannot cast back to the
    output's, else None. A function of the two dtypes, so torch is asked once a pair:
    ``torch.promote_types`` lets go of the GIL, and taking it back waits for the judge's
    other threads, which in a campaign costs far more than the call itself."""
    torch = _torch.torch_module()
    out = _torch.torch_dtype(out_dtype)
    result = torch.promote_types(out, _torch.torch_dtype(bias_dtype))
    return None if torch.can_cast(result, out) else str(result).removeprefix("torch.")


def _shape_check_sizes(call: AtenCall) -> list[int]:
    """The slow kernels' shape checks: ``div_rtn(padded - kernel, stride) + 1``."""
    a, p, sizes = call.a, call.params, []
    for i, (x, k) in enumerate(zip(call.spatial, call.kernel, strict=True)):
        site = f"slow_conv.shape_check.dim{i}"
        padded = a.add_i64(x, a.mul_i64(2, p.padding[i], site), site)
        sizes.append(a.add_i64(div_rtn(a, a.sub_i64(padded, k, site), p.stride[i], site), 1, site))
    return sizes


def _output_too_small(call: AtenCall, sizes: list[int]) -> None:
    if any(s < 1 for s in sizes):
        raise TorchError(
            f"Given input size per channel: ({fmt_x(call.spatial)}). Calculated output size "
            f"per channel: ({fmt_x(sizes)}). Output size is too small"
        )


def _slow2d(call: AtenCall) -> list[int]:
    """``thnn_conv2d`` (``ConvolutionMM2d.cpp``), once a group."""
    kh, kw = call.kernel
    if not (kw > 0 and kh > 0):
        raise TorchError(
            f"kernel size should be greater than zero, but got kernel_height: {kh} "
            f"kernel_width: {kw}"
        )
    # stride > 0, weight non-empty, padded input >= kernel: already true here.
    _output_too_small(call, _shape_check_sizes(call))
    # the output itself is sized with int64 C division
    out = conv_output_size(call.a, call.in_sizes, call.w_sizes, call.params)
    p = call.params
    if not (call.kernel == [1, 1] and p.stride == (1, 1) and p.padding == (0, 0)):
        # compute_columns2d's im2col buffer comes first: [N, C/g * kh * kw, oh * ow]
        a, site = call.a, "slow_conv2d.columns"
        taps = a.mul_i64(a.mul_i64(call.w_sizes[1], kh, site), kw, site)
        columns = [call.in_sizes[0], taps, a.mul_i64(out[2], out[3], site)]
        check_output_allocatable(columns, call.dtype)
    check_output_allocatable(out, call.dtype)
    _dispatch(call, "slow_conv2d_cpu", ALL_TYPES)
    _data_ptr(call, call.w_dtype)
    return out


def _slow_dilated(call: AtenCall) -> list[int]:
    """``slow_conv_dilated2d/3d`` (``NaiveDilatedConvolution.cpp``), once a group."""
    p = call.params
    if not all(k > 0 for k in call.kernel):
        raise TorchError(
            f"kernel size should be greater than zero, but got {fmt_sizes(call.kernel)}"
        )
    if not all(d > 0 for d in p.dilation):
        raise TorchError(f"dilation should be greater than zero, but got {fmt_sizes(p.dilation)}")
    spatial = []
    for i, (x, k) in enumerate(zip(call.spatial, call.kernel, strict=True)):
        site = f"slow_conv_dilated.get_output_size.dim{i}"
        num = call.a.sub_i64(
            call.a.add_i64(x, call.a.mul_i64(2, p.padding[i], site), site),
            kernel_extent(call.a, p.dilation[i], k, site),
            site,
        )
        spatial.append(call.a.add_i64(div_rtn(call.a, num, p.stride[i], site), 1, site))
    if not all(s >= 0 for s in spatial):
        raise TorchError(
            f"calculated output size {' '.join(map(str, spatial))} is too small (all sizes "
            "must be non-negative)"
        )
    out = [call.in_sizes[0], call.w_sizes[0], *spatial]
    check_output_allocatable(out, call.dtype)
    _dispatch(call, "slow_conv_dilated<>", FLOATING_AND_LONG)
    _data_ptr(call, call.w_dtype)
    return out


def _slow3d(call: AtenCall) -> list[int]:
    """``slow_conv3d`` (``ConvolutionMM3d.cpp``): groups handled inside."""
    kd, kh, kw = call.kernel
    if not (kw > 0 and kh > 0 and kd > 0):
        raise TorchError(
            f"kernel size should be greater than zero, but got: {kd} x {kh} x {kw} (TxHxW)"
        )
    pd, ph, pw = call.params.padding
    for name, pad in (("height", ph), ("width", pw), ("depth", pd)):
        if pad > 2**61:
            raise TorchError(f"Padding {name} too large: pad_{name}={pad}", "ValueError")
    _output_too_small(call, _shape_check_sizes(call))
    out = conv_output_size(call.a, call.in_sizes, call.w_sizes, call.params)
    one = (
        call.kernel == [1, 1, 1]
        and call.params.padding == (0, 0, 0)
        and call.params.stride == (1, 1, 1)
        and call.params.groups == 1
    )
    if not one:
        # compute_columns3d allocates the im2col buffer first, sized in wrapping int64
        a, site = call.a, "slow_conv3d.columns"
        taps = a.mul_i64(a.mul_i64(call.in_sizes[1], call.kernel[0], site), call.kernel[1], site)
        volume = a.mul_i64(a.mul_i64(out[2], out[3], site), out[4], site)
        columns = [call.in_sizes[0], a.mul_i64(taps, call.kernel[2], site), volume]
        check_output_allocatable(columns, call.dtype)
        _dispatch(call, "compute_columns3d", ALL_TYPES)
    check_output_allocatable(out, call.dtype)
    _dispatch(call, "slow_conv3d_cpu", ALL_TYPES)
    _data_ptr(call, call.w_dtype)
    return out


def _i32(call: AtenCall, values, site: str) -> list[int]:
    """The slow transposed shape checks take ``int``: every parameter is cut to 32 bits."""
    return [call.a.narrow_i32(v, site) for v in values]


def _slow_transpose(call: AtenCall) -> list[int]:
    """``slow_conv_transpose2d/3d`` (``NaiveConvolutionTranspose{2,3}d.cpp``), once a group."""
    p = call.params
    three = len(call.in_sizes) == 5
    k = _i32(call, call.kernel, "slow_conv_transpose.kernel")
    s = _i32(call, p.stride, "slow_conv_transpose.stride")
    pad = _i32(call, p.padding, "slow_conv_transpose.padding")
    d = _i32(call, p.dilation, "slow_conv_transpose.dilation")
    op = _i32(call, p.output_padding, "slow_conv_transpose.output_padding")
    names = ("depth", "height", "width") if three else ("height", "width")
    w = call.per_group_weight()
    w_numel = 1
    for v in w:
        w_numel *= v
    if not three and not all(v > 0 for v in k):
        raise TorchError(
            f"kernel size should be greater than zero, but got kernel_height: {k[0]} "
            f"kernel_width: {k[1]}"
        )
    if not all(v > 0 for v in s):
        listing = " ".join(f"stride_{n}: {v}" for n, v in zip(names, s, strict=True))
        raise TorchError(f"stride should be greater than zero, but got {listing}")
    if not all(v > 0 for v in d):
        listing = ", ".join(f"dilation_{n}: {v}" for n, v in zip(names, d, strict=True))
        raise TorchError(f"dilation should be greater than zero, but got {listing}")
    if not all(o < st or o < di for o, st, di in zip(op, s, d, strict=True)):
        listing = " ".join(
            f"{what}_{n}: {v}"
            for what, values in (("output_padding", op), ("stride", s), ("dilation", d))
            for n, v in zip(names, values, strict=True)
        )
        raise TorchError(
            "output padding must be smaller than either stride or dilation, but got " + listing
        )
    if w_numel == 0:
        if three:
            raise TorchError(
                "non-empty 5D (n_output_plane x n_input_plane x kernel_depth x kernel_height "
                f"x kernel_width) tensor expected for weight, but got: {fmt_sizes(w)}"
            )
        raise TorchError(f"non-empty 2D or 4D weight tensor expected, but got: {fmt_sizes(w)}")
    # the shape check's output size: int64 input size times 32-bit parameters, and the
    # kernel extent and 2 * padding in 32-bit int arithmetic
    checked = []
    for i, x in enumerate(call.spatial):
        site = f"slow_conv_transpose.shape_check.dim{i}"
        a = call.a
        size = a.mul_i64(a.sub_i64(x, 1, site), s[i], site)
        size = a.sub_i64(size, a.mul_i32(2, pad[i], site), site)
        extent = a.add_i32(a.mul_i32(d[i], a.sub_i32(k[i], 1, site), site), 1, site)
        size = a.add_i64(a.add_i64(size, extent, site), op[i], site)
        checked.append(size)
    if any(v < 1 for v in checked):
        raise TorchError(
            f"Given input size per channel: ({fmt_x(call.spatial)}). Calculated output size "
            f"per channel: ({fmt_x(checked)}). Output size is too small"
        )
    # the output is then sized with the int64 parameters
    spatial = []
    for i, x in enumerate(call.spatial):
        site = f"slow_conv_transpose.output_size.dim{i}"
        a = call.a
        size = a.mul_i64(a.sub_i64(x, 1, site), p.stride[i], site)
        size = a.sub_i64(size, a.mul_i64(2, p.padding[i], site), site)
        size = a.add_i64(size, kernel_extent(a, p.dilation[i], call.kernel[i], site), site)
        spatial.append(a.add_i64(size, p.output_padding[i], site))
    out = [call.in_sizes[0], w[1], *spatial]
    check_output_allocatable(out, call.dtype)
    name = "slow_conv_transpose3d_out_cpu" if three else "slow_conv_transpose2d_out_cpu"
    _dispatch(call, name, FLOATING_AND_LONG)
    _data_ptr(call, call.w_dtype)
    if three:
        _data_ptr(call, call.b_dtype)  # the bias goes through a gemm as scalar_t
    else:
        _add_in_place(call, call.b_dtype)
    out[1] = call.a.mul_i64(w[1], p.groups, "slow_conv_transpose.cat")
    return out


def _nnpack(call: AtenCall) -> list[int]:
    """``_nnpack_spatial_convolution`` (``NNPACK.cpp``), once a group: float32 only."""
    out = conv_output_size(call.a, call.in_sizes, call.w_sizes, call.params)
    check_output_allocatable(out, call.dtype)  # at::empty(output) comes first
    if call.w_dtype != "float32" or call.b_dtype not in (None, "float32"):
        raise TorchError("Mismatched Tensor types in NNPack convolutionOutput")
    return out


BACKEND_CHECKS: dict[str, Callable[[AtenCall], list[int]]] = {
    "Empty": _empty,
    "NnpackSpatial": _nnpack,
    "Mkldnn": _mkldnn,
    "MkldnnTranspose": _mkldnn_transpose,
    "Slow2d": _slow2d,
    "SlowDilated2d": _slow_dilated,
    "SlowDilated3d": _slow_dilated,
    "Slow3d": _slow3d,
    "SlowTranspose2d": _slow_transpose,
    "SlowTranspose3d": _slow_transpose,
}
