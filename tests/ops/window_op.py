"""A toy op: a 1-D window (``out[n, c, i]`` reads ``input[n, c, i*stride : i*stride + k]``).

It is here to show that an op plugs into convcheck without touching the core: a case
type, two revisions of steps, a construction. Nothing else is declared; the core fuzzes,
minimises and proves it. ``legacy`` computes the output size before it checks the
stride and the kernel size (the shape of convolution's old bugs: a division by zero and
a signed overflow, both before the check that would have rejected the call);
``current`` checks first.
"""

from __future__ import annotations

from types import MappingProxyType

from convcheck import registry
from convcheck.case import Case, TensorSpec
from convcheck.fixedint import INT32_MAX, Arith
from convcheck.frozen import frozen
from convcheck.generate import Source, param_list, size
from convcheck.schema import int_list, tensor
from convcheck.steps import Reject, Revision


@frozen
class WindowCase(Case):
    input: TensorSpec = tensor()
    out: TensorSpec = tensor(output=True)
    kernel_size: tuple[int, ...] = int_list(simplest=1, low=1)
    stride: tuple[int, ...] = int_list(simplest=1, low=1)

    OP = "window"


class Call:
    def __init__(self, case: WindowCase) -> None:
        self.case = case
        self.out_sizes: list[int] = []


def ranks(call: Call, a: Arith) -> None:
    if call.case.input.rank != 3:
        raise Reject("rank.input")
    if call.case.out.rank != 3:
        raise Reject("rank.out")


def lengths(call: Call, a: Arith) -> None:
    if len(call.case.kernel_size) != 1:
        raise Reject("kernel_size.length")
    if len(call.case.stride) != 1:
        raise Reject("stride.length")


def stride(call: Call, a: Arith) -> None:
    if not 1 <= call.case.stride[0] <= INT32_MAX:
        raise Reject("stride.range")


def kernel(call: Call, a: Arith) -> None:
    k = call.case.kernel_size[0]
    if k < 1:
        raise Reject("kernel.nonpos")
    if k > call.case.input.sizes[2]:
        raise Reject("kernel.gt_input")


def output_size(call: Call, a: Arith) -> None:
    n, c, length = call.case.input.sizes
    span = a.sub_i64(length, call.case.kernel_size[0], "output_size.span")
    steps = a.div_i64(span, call.case.stride[0], "output_size.steps")
    positions = a.add_i64(steps, 1, "output_size.plus_1")
    call.out_sizes = [n, c, a.narrow_i32(positions, "output_size.narrow")]


def output_valid(call: Call, a: Arith) -> None:
    if call.out_sizes[2] <= 0:
        raise Reject("output.invalid")


def _revision(name: str, steps: tuple) -> Revision:
    checks = {
        "ranks": ("rank.input", "rank.out"),
        "lengths": ("kernel_size.length", "stride.length"),
        "stride": ("stride.range",),
        "kernel": ("kernel.nonpos", "kernel.gt_input"),
        "output_valid": ("output.invalid",),
    }
    names = [step.__name__ for step in steps]
    return Revision(
        name,
        steps,
        frozenset(),
        Call,
        MappingProxyType({s: checks[s] for s in names if s in checks}),
    )


def build_case(src: Source, small: bool = False) -> WindowCase:
    p_edge = 0.0 if small else 0.15
    length = size(src, 0 if src.chance(0.05) else 1, 8, p_edge)
    rank = 3 if src.chance(0.95) else src.choice((2, 4))
    sizes = (size(src, 1, 2, 0.0), size(src, 1, 3, 0.0), length)[:rank]
    return WindowCase(
        input=TensorSpec(sizes + (1,) * (rank - len(sizes))),
        out=TensorSpec((1, 1, 1)),
        kernel_size=param_list(src, 1, 1, 3, p_edge),
        stride=param_list(src, 1, 1, 3, p_edge),
    )


class Window(registry.Op):
    name = "window"
    case_type = WindowCase
    revisions = MappingProxyType(
        {
            "legacy": _revision("legacy", (ranks, lengths, output_size, kernel, output_valid)),
            "current": _revision(
                "current", (ranks, lengths, stride, kernel, output_size, output_valid)
            ),
        }
    )
    build_case = staticmethod(build_case)


OP = Window()
