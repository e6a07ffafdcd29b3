"""A convolution finding in ExecuTorch's own form: a GoogleTest for
``kernels/test/op_convolution_test.cpp`` and the facts its issue report needs.

The test is a ``TEST_F(OpConvOutTest, ...)`` body written with ExecuTorch's test
utilities (``TensorFactory``, ``ET_EXPECT_KERNEL_FAILURE``, ``EXPECT_TENSOR_CLOSE``), so a
maintainer pastes it into that file. It asserts ``current``, the fixed semantics: failure
for a call ``current`` rejects; out's sizes (and, for a small float call, its values) for
one it accepts. On the buggy kernel it fails by a sanitizer report or by a failed
expectation.

Tensors are made the way the source adapter makes them (``executorch_source/adapter.cpp``):
a tensor small enough to hold comes from a ``TensorFactory``; any other one is a
``TensorImpl`` over no data, which only a call that never reads it may be given. Such a
``TensorImpl`` is built with sizes of 0 when its numel would overflow its constructor's
int64 product, and given its real sizes afterwards.
"""

from __future__ import annotations

import re
from pathlib import Path

from convcheck import model
from convcheck.case import TensorSpec, channels_last_order
from convcheck.ops.convolution.case import ConvolutionCase
from convcheck.ops.convolution.executorch_source.gtest import environment, run_tests
from convcheck.ops.convolution.known_bugs import bug_class

__all__ = [
    "FUNCTION",
    "TEST_FILE",
    "bug_class",
    "environment",
    "fix",
    "gtest",
    "run_tests",
    "test_name",
    "torch_repro",
]

# The kernel's function, and the test file its tests go in, in ExecuTorch's tree.
FUNCTION = "convolution_out"
TEST_FILE = "kernels/test/op_convolution_test.cpp"

# ExecuTorch's ScalarType for each of convcheck's dtypes.
SCALAR_TYPES = {
    "float32": "Float",
    "float64": "Double",
    "float16": "Half",
    "bfloat16": "BFloat16",
    "int8": "Char",
    "uint8": "Byte",
    "int16": "Short",
    "int32": "Int",
    "int64": "Long",
    "bool": "Bool",
}
# A tensor with more elements than this is not given a buffer.
SMALL_NUMEL = 4096
INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
# The adapter's bound for out when no buffer is needed (large_capacity in adapter.cpp): no
# resize passes it, so the kernel's own checks decide; INT64_MAX elements with 3 dims or more.
_LARGE_CAPACITY = (218934409, 82443193, 511)

DOCS_CHECKS = "docs/checks.md"


def test_name(entry_name: str) -> str:
    """A GoogleTest name (no underscores) from a corpus entry's name."""
    return "".join(word[:1].upper() + word[1:] for word in re.split(r"[^A-Za-z0-9]+", entry_name))


def _strides(sizes: tuple[int, ...], order: tuple[int, ...]) -> list[int]:
    """Strides in int64 from sizes and dim order, a size of 0 counting as 1, as ExecuTorch
    computes them (in int32 there: the point of two of its bugs)."""
    strides = [0] * len(sizes)
    stride = 1
    for d in reversed(order):
        strides[d] = stride
        stride *= max(sizes[d], 1)
    return strides


def _wrapped_i32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - 2**32 if value > INT32_MAX else value


def _i64(value: int) -> str:
    # -2^63 has no literal: the minus applies to a positive literal that does not fit.
    return "INT64_MIN" if value == -(2**63) else str(value)


def _list(values) -> str:
    # -2^31 has no int32 literal either: ``-2147483648`` is a long, narrowed in braces.
    return "{" + ", ".join("INT32_MIN" if v == -(2**31) else str(v) for v in values) + "}"


def _fits_a_factory(t: TensorSpec, order: tuple[int, ...]) -> bool:
    """TensorFactory computes strides in int32 itself and knows two dim orders only."""
    contiguous = order == tuple(range(t.rank))
    channels_last = t.rank in (4, 5) and order == channels_last_order(t.rank)
    return (
        (contiguous or channels_last)
        and t.numel <= SMALL_NUMEL
        and all(s <= INT32_MAX for s in _strides(t.sizes, order))
    )


class _Body:
    """The lines of one test body, and the factories they use."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.factories: dict[str, str] = {}

    def factory(self, dtype: str) -> str:
        return self.factories.setdefault(dtype, f"tf_{SCALAR_TYPES[dtype].lower()}")

    def tensor(self, name: str, t: TensorSpec, buffer_sizes: tuple[int, ...] | None = None) -> str:
        """Declare tensor ``name`` and return the expression that names it. ``buffer_sizes``:
        out's sizes when it gets a buffer (the sizes the kernel resizes it to)."""
        order = t.order
        if name != "out" and _fits_a_factory(t, order):
            return self._factory_tensor(name, t.sizes, t.dtype, order, 1)
        if name == "out" and buffer_sizes is not None:
            sized = TensorSpec(buffer_sizes, t.dtype, order)
            if _fits_a_factory(sized, order):
                return self._factory_tensor(name, buffer_sizes, t.dtype, order, 0)
        return self._impl_tensor(name, t, order)

    def _factory_tensor(self, name, sizes, dtype, order, fill) -> str:
        tf = self.factory(dtype)
        layout = "" if order == tuple(range(len(sizes))) else "_channels_last"
        # out is resized by the kernel: a bound of its own sizes lets it resize to them.
        if name == "out":
            made = f"{tf}.zeros{layout}({_list(sizes)}, TensorShapeDynamism::DYNAMIC_BOUND)"
        else:
            made = f"{tf}.full{layout}({_list(sizes)}, {fill})"
        self.lines.append(f"Tensor {name} = {made};")
        return name

    def _impl_tensor(self, name: str, t: TensorSpec, order: tuple[int, ...]) -> str:
        out = name == "out"
        strides = [_wrapped_i32(s) for s in _strides(t.sizes, order)]
        numel_fits = t.numel <= INT64_MAX
        if out:
            capacity = [
                INT32_MAX if t.rank < 3 else (_LARGE_CAPACITY[i] if i < 3 else 1)
                for i in range(t.rank)
            ]
            why = (
                f"// {name}: no buffer (the call must fail before the loops). Its bound is\n"
                "// INT64_MAX elements, so the kernel's resize decides by its own checks."
            )
        else:
            capacity = list(t.sizes) if numel_fits else [0] * t.rank
            why = f"// {name}: too large to hold; the call must fail before it reads its data." + (
                ""
                if numel_fits
                else "\n// Built with sizes of 0 (TensorImpl's numel would "
                "overflow int64), then given its sizes."
            )
        scalar = SCALAR_TYPES[t.dtype]
        self.lines += [
            why,
            f"executorch::aten::SizesType {name}_sizes[] = {_list(capacity)};",
            f"executorch::aten::DimOrderType {name}_dim_order[] = {_list(order)};",
            f"executorch::aten::StridesType {name}_strides[] = {_list(strides)};",
            f"executorch::runtime::etensor::TensorImpl {name}_impl(",
            f"    ScalarType::{scalar}, {t.rank}, {name}_sizes, nullptr, {name}_dim_order,",
            f"    {name}_strides" + (", TensorShapeDynamism::DYNAMIC_BOUND);" if out else ");"),
        ]
        if list(t.sizes) != capacity:
            self.lines.append(
                f"const executorch::aten::SizesType {name}_real[] = {_list(t.sizes)};"
            )
            self.lines.append(
                f"std::copy(std::begin({name}_real), std::end({name}_real), {name}_sizes);"
            )
        self.lines.append(f"Tensor {name}(&{name}_impl);")
        return name

    def int_list(self, name: str, values: tuple[int, ...]) -> None:
        if values:
            self.lines.append(f"int64_t {name}[] = {{{', '.join(_i64(v) for v in values)}}};")
        else:
            self.lines.append(f"ArrayRef<int64_t> {name};")


def _aten_arguments(case: ConvolutionCase) -> list:
    """``aten.convolution``'s arguments after the tensors, as Python values."""
    values = (getattr(case, name) for name in _ATEN_PARAMS)
    return [list(v) if isinstance(v, tuple) else v for v in values]


_ATEN_PARAMS = ("stride", "padding", "dilation", "transposed", "output_padding", "groups")


def _expected_values(case: ConvolutionCase) -> list[float] | None:
    """torch's out for the call with every input element 1, in out's memory order (its
    dim order's), as ``TensorFactory.make_with_dimorder`` takes data; ``None`` where that
    is no float convolution torch computes cheaply."""
    if case.out.dtype not in ("float32", "float64") or case.input.dtype != case.out.dtype:
        return None
    import torch

    ones = {
        name: torch.ones(list(spec.sizes), dtype=torch.float64)
        for name, spec in (("input", case.input), ("weight", case.weight), ("bias", case.bias))
        if spec is not None
    }
    out = torch.ops.aten.convolution(
        ones["input"], ones["weight"], ones.get("bias"), *_aten_arguments(case)
    )
    return [float(v) for v in out.permute(*case.out.order).flatten().tolist()]


def gtest(case: ConvolutionCase, name: str, signature: str, first_frame: str | None) -> str:
    """The TEST_F for ``case``, for ``op_convolution_test.cpp``."""
    current = model.run(case, "current").outcome
    legacy = model.run(case, "legacy").outcome
    accepts = current.verdict == "accept"
    body = _Body()
    body.lines.append("")  # the factories' declarations go first, once the tensors are known
    inp = body.tensor("input", case.input)
    weight = body.tensor("weight", case.weight)
    if case.bias is None:
        body.lines.append("optional<Tensor> bias;")
    else:
        body.lines.append(f"optional<Tensor> bias({body.tensor('bias_tensor', case.bias)});")
    # out gets a buffer of the sizes the kernel resizes it to: current's when it accepts,
    # else the buggy kernel's, so that a check it lacks fails the expectation, not memory.
    sizes = current.out_sizes if accepts else legacy.out_sizes
    out = body.tensor("out", case.out, tuple(sizes) if sizes is not None else None)
    for arg in ("stride", "padding", "dilation", "output_padding"):
        body.int_list(arg, getattr(case, arg))
    call = (
        f"op_convolution_out({inp}, {weight}, bias, stride, padding, dilation, "
        f"{'true' if case.transposed else 'false'}, output_padding, {_i64(case.groups)}, {out})"
    )
    if accepts:
        assert current.out_sizes is not None
        body.lines.append(f"{call};")
        body.lines += [f"EXPECT_EQ(out.size({d}), {n});" for d, n in enumerate(current.out_sizes)]
        numel = TensorSpec(tuple(current.out_sizes)).numel
        values = _expected_values(case) if 0 < numel <= SMALL_NUMEL else None
        if values is not None:
            tf = body.factory(case.out.dtype)
            # out's factory made it contiguous or channels-last (it got a buffer)
            layout = "" if case.out.dim_order is None else "_channels_last"
            body.lines.append(
                f"EXPECT_TENSOR_CLOSE(out, {tf}.make{layout}({_list(current.out_sizes)}, "
                f"{_list(values)}));"
            )
    else:
        body.lines.append(f"ET_EXPECT_KERNEL_FAILURE(context_, {call});")
    body.lines[0:1] = [
        f"TensorFactory<ScalarType::{SCALAR_TYPES[dtype]}> {tf};"
        for dtype, tf in body.factories.items()
    ]
    verdict = (
        f"the fixed kernel accepts it: out {list(current.out_sizes or ())}"
        if accepts
        else f"the fixed kernel rejects it: {current.check}"
    )
    comment = [
        f"// convcheck: {signature}",
        *([f"// sanitizer's first frame: {first_frame}"] if first_frame else []),
        f"// {verdict}.",
    ]
    return "\n".join(
        [
            *comment,
            f"TEST_F(OpConvOutTest, {test_name(name)}) {{",
            *(f"  {line}" for text in body.lines for line in text.split("\n")),
            "}",
            "",
        ]
    )


def fix(case: ConvolutionCase) -> tuple[str | None, str | None]:
    """``current``'s check that rejects ``case`` and its row of the checks doc (None, None
    when current accepts)."""
    check = model.run(case, "current").outcome.check
    if check is None:
        return None, None
    doc = Path(__file__).resolve().parents[3] / DOCS_CHECKS
    text = doc.read_text() if doc.is_file() else ""
    current = text[text.find("## current") :]
    # A row names a check in full, or as its step and a suffix (`.range` beside `stride`).
    step, _, suffix = check.partition(".")
    for line in current.splitlines():
        if f"`{check}`" in line or (f"`{step}`" in line and f"`.{suffix}`" in line):
            return check, line
    return check, None


def torch_repro(case: ConvolutionCase) -> str:
    """A Python script that makes ``case``'s call in torch, with oneDNN and without."""
    dtype = case.input.dtype
    tensors = [
        f"{name} = torch.zeros({list(spec.sizes)}, dtype=torch.{dtype})"
        for name, spec in (("input", case.input), ("weight", case.weight), ("bias", case.bias))
        if spec is not None
    ]
    arguments = ", ".join(repr(v) for v in _aten_arguments(case))
    bias = "bias" if case.bias else "None"
    call = "torch.ops.aten.convolution(*args)"
    return "\n".join(
        [
            "import torch",
            "",
            *tensors,
            f"args = (input, weight, {bias}, {arguments})",
            "with torch.backends.mkldnn.flags(enabled=False):",
            f"    print({call}.shape)  # without oneDNN",
            f"print({call}.shape)  # with oneDNN (the default)",
        ]
    )
