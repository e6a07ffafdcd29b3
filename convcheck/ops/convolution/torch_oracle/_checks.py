"""ATen's verdict for a case of any size, without computing (the "checks" path).

real CPU ``aten.convolution`` does, in order:

1. the ``_convolution`` prologue: weight rank >= 3, groups > 0;
2. ``expand_param_if_needed`` for stride, padding, dilation, output_padding;
3. ``check_shape_forward`` (signs, ranks, groups against the weight, channels, bias
   shape, padding <= INT64_MAX / 2, a regular convolution's kernel against the padded
   input) and ``_select_conv_backend`` (Empty for N == 0 or C == 0, "only zero batch or
   zero channel" for another empty dim, oneDNN or a slow kernel by dtype, batch, kernel,
   stride, dilation, groups, N*C*H*W and the thread count, nothing for rank > 5);
4. the chosen backend's own checks, then the output's allocation.

Steps 1-2 are Python here. Step 3 is torch's own C++ through the private
``torch._C._select_conv_backend`` on zero-stride tensors (one element of memory whatever
the sizes); when that API is missing, ``_fallback`` reproduces it in Python. Step 4 is
the table ``_backends.BACKEND_CHECKS``, one function per backend. The Empty backend is
run for real on tensors that hold no memory (its input is empty) and one-element
stand-ins.

Not modelled: memory itself running out; an accepted call with a huge shape is answered
"accept" with ATen's output sizes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import field

from convcheck.case import DTYPE_SIZES
from convcheck.frozen import frozen
from convcheck.ops.convolution.case import ConvolutionCase
from convcheck.ops.convolution.torch_oracle import _torch
from convcheck.ops.convolution.torch_oracle._backends import (
    BACKEND_CHECKS,
    PREDICTED_CRASH,
    AtenCall,
    PredictedCrash,
)
from convcheck.ops.convolution.torch_oracle._normalize import normalize
from convcheck.ops.convolution.torch_oracle.aten import (
    SYMINT_MIN,
    AtenWrapping,
    TorchError,
    expand_params,
    numel_problem,
    physical_sizes,
    sizes_fit,
    storage_problem,
)
from convcheck.outcome import Outcome


@frozen
class CheckResult:
    outcome: Outcome
    backend: str  # "" when rejected before a backend was chosen
    error: str = ""  # the exception type torch raises, "" when accepted
    # ``_select_conv_backend``'s arguments as the check path made them (zero-stride tensors,
    # the four lists, transposed, groups): a function of the case alone. None when the
    # choice was not made on torch's own C++ (rejected before it, or the Python fallback).
    arguments: tuple | None = field(default=None, compare=False, repr=False)

    @property
    def choose(self) -> Callable[[int, bool], str] | None:
        """The backend ATen picks for the same call with other settings (threads, oneDNN):
        the call's arguments asked again, not made again (``backend_choice``)."""
        if self.arguments is None:
            return None
        return functools.partial(_choice_again, self.arguments)


def check_path(
    case: ConvolutionCase,
    *,
    threads: int,
    onednn: bool = True,
    private: bool | None = None,
    again: CheckResult | None = None,
) -> CheckResult:
    """ATen's verdict on ``case`` with ``threads`` threads and oneDNN on or off.

    ``private``: use ``torch._C._select_conv_backend`` (None: when this torch has it).
    ``again``: the check path's result on the same case with other settings, whose
    arguments (when it made them) are asked again instead of made again.
    """
    if private is None:
        private = _torch.has_select_conv_backend()
    a = AtenWrapping()
    holder: dict[str, str] = {"backend": ""}
    # Asking again on the same arguments is asking afresh: ``_select_conv_backend`` reads
    # its arguments (sizes, dtypes and strides of the three tensors, the four lists,
    # transposed, groups), made from the case alone, and torch's global state, of which
    # only the thread count and oneDNN's flag change in this process (``settings``, given
    # with each question). tests/torch holds the two equal.
    arguments: list[tuple] = [again.arguments] if again and again.arguments and private else []
    error = ""
    try:
        outcome = Outcome.accept(_run(case, a, threads, onednn, private, holder, arguments))
    except TorchError as e:
        outcome = Outcome.reject(normalize(e.error, e.message, case), detail=e.message)
        error = e.error
    except PredictedCrash as c:
        outcome = Outcome.crashed(PREDICTED_CRASH, c.site, detail=c.detail)
    return CheckResult(outcome, holder["backend"], error, arguments[0] if arguments else None)


def creation_problem(case: ConvolutionCase) -> str | None:
    """Why torch cannot even create the call's tensors, or None."""
    for spec in (case.input, case.weight, case.bias):
        # A permutation has the same product: sizes that fit fit in either order.
        if spec is not None and not sizes_fit(spec.sizes, DTYPE_SIZES[spec.dtype]):
            # the buffer in dim order, then the view in logical order
            problem = storage_problem(physical_sizes(spec), spec.dtype)
            problem = problem or numel_problem(spec.sizes)
            if problem is not None:
                return problem
    return None


def backend_choice(
    case: ConvolutionCase,
    *,
    threads: int,
    onednn: bool,
    private: bool,
    checked: CheckResult | None = None,
) -> str:
    """The backend ATen picks for ``case`` (steps 1-3 only), "" when a check before the
    choice rejects it. ``checked``: the check path's result on ``case`` with any settings,
    whose ``choose`` (when it has one) asks again without making the call again."""
    if checked is not None and checked.choose is not None:
        return checked.choose(threads, onednn)
    try:
        return _select(case, AtenWrapping(), threads, onednn, private).backend
    except TorchError:
        return ""


def _select(case, a, threads, onednn, private, arguments: list | None = None) -> AtenCall:
    """Steps 1-3: the call as ATen sees it, its backend chosen. ``arguments`` gets the
    private API's arguments, once made; when it holds them already (made for the same
    case: it passed the checks that make them), they are asked again."""
    made = arguments[0] if arguments else None
    if made is None:
        problem = creation_problem(case)
        if problem is not None:
            raise TorchError(problem)
    call = aten_call(case, a, threads, onednn)
    if private:
        if made is None:
            if call.one_d:
                # ATen checks a 1-D call's shapes before its 2-D view, which the private
                # API is handed: its messages would name the view's sizes, not the call's.
                from convcheck.ops.convolution.torch_oracle._fallback import (
                    check_shape_forward,
                )

                check_shape_forward(call)
            made = _private_arguments(call)
            if arguments is not None:
                arguments.append(made)
        call.backend = _ask_private(made, threads, onednn)
    else:
        from convcheck.ops.convolution.torch_oracle._fallback import select_backend

        with _torch.settings(threads, onednn):
            call.backend = select_backend(call)
    return call


def _run(case, a, threads, onednn, private, holder, arguments) -> list[int]:
    call = _select(case, a, threads, onednn, private, arguments)
    holder["backend"] = backend = call.backend
    in_sizes, w_sizes, params = call.in_sizes, call.w_sizes, call.params
    if call.one_d:
        call.in_sizes = [in_sizes[0], in_sizes[1], 1, in_sizes[2]]
        call.w_sizes = [w_sizes[0], w_sizes[1], 1, w_sizes[2]]
        call.params = params.view1d_as_2d()
    try:
        checks = BACKEND_CHECKS[backend]
    except KeyError:
        raise AssertionError(f"no check table for backend {backend}") from None
    out = checks(call)
    if call.one_d:
        out = [out[0], out[1], out[3]]
    return out


def aten_call(case, a, threads: int, onednn: bool) -> AtenCall:
    """Steps 1 and 2: the dispatcher's SymInt[] lists, ``_convolution``'s prologue and the
    parameters expanded. Pure comparisons, so the solver runs them symbolically too."""
    # The dispatcher turns the SymInt[] arguments into int64 lists first: a value below
    # -2^62 is a SymInt's tag, not an integer.
    for values in (case.stride, case.padding, case.dilation, case.output_padding):
        for v in values:
            if v < SYMINT_MIN:
                raise TorchError(
                    "aten/src/ATen/RegisterCompositeExplicitAutograd_0.cpp: SymIntArrayRef "
                    "expected to contain only concrete integers"
                )
    # _convolution's prologue
    if case.weight.rank < 3:
        raise TorchError("weight should have at least three dimensions")
    if case.groups <= 0:
        raise TorchError("non-positive groups is not supported")
    params = expand_params(case, case.weight.rank - 2)
    in_sizes, w_sizes = list(case.input.sizes), list(case.weight.sizes)
    one_d = case.weight.rank == 3 and case.input.rank == 3
    return AtenCall(case, a, in_sizes, w_sizes, params, one_d, threads, onednn)


def _private_arguments(call: AtenCall) -> tuple:
    """``check_shape_forward`` + ``_select_conv_backend``'s arguments: zero-stride tensors.

    A 1-D convolution is viewed as 2-D here, as ATen does after ``check_shape_forward``
    (the binding's own view calls ``.contiguous()``, which would allocate the full
    input); the inserted dim (size 1, stride 1, padding 0, dilation 1) passes every
    check, so the verdict is the same.
    """
    case, p = call.case, call.params
    in_sizes, w_sizes = call.in_sizes, call.w_sizes
    if call.one_d:
        in_sizes = [in_sizes[0], in_sizes[1], 1, in_sizes[2]]
        w_sizes = [w_sizes[0], w_sizes[1], 1, w_sizes[2]]
        p = p.view1d_as_2d()
    inp = _torch.zero_stride_tensor(in_sizes, case.input.dtype)
    weight = _torch.zero_stride_tensor(w_sizes, case.weight.dtype)
    bias = (
        None if case.bias is None else _torch.zero_stride_tensor(case.bias.sizes, case.bias.dtype)
    )
    return (
        inp,
        weight,
        bias,
        list(p.stride),
        list(p.padding),
        list(p.dilation),
        p.transposed,
        list(p.output_padding),
        p.groups,
    )


def _ask_private(arguments: tuple, threads: int, onednn: bool) -> str:
    """torch's C++ ``check_shape_forward`` + ``_select_conv_backend`` on ``arguments``."""
    torch = _torch.torch_module()
    with _torch.settings(threads, onednn):
        try:
            backend = torch._C._select_conv_backend(*arguments)
        except (RuntimeError, ValueError, IndexError, TypeError) as e:
            raise TorchError(str(e), type(e).__name__) from None
    return _torch.BACKEND_NAMES.get(int(backend), f"backend{int(backend)}")


def _choice_again(arguments: tuple, threads: int, onednn: bool) -> str:
    try:
        return _ask_private(arguments, threads, onednn)
    except TorchError:
        return ""
