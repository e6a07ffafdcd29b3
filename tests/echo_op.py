"""A test op whose call has every kind of argument and two outputs, with a C library and
call unit of its own (``native/echo/``): what the generic C worker decodes and answers, seen whole.
It has no model: only its native pieces are used."""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType

from convcheck import registry
from convcheck.case import Case, TensorSpec
from convcheck.frozen import frozen
from convcheck.schema import boolean, int_list, integer, optional_int, tensor


@frozen
class EchoCase(Case):
    input: TensorSpec = tensor()
    extra: TensorSpec | None = tensor(optional=True, ordered=False)
    out: TensorSpec = tensor(output=True)
    indices: TensorSpec = tensor(output=True)
    sizes: tuple[int, ...] = int_list(simplest=1, low=1)
    count: int = integer(simplest=1, low=1)
    limit: int | None = optional_int(simplest=1, low=1)
    flag: bool = boolean()

    OP = "echo"


class Echo(registry.Op):
    name = "echo"
    case_type = EchoCase
    revisions = MappingProxyType({})
    native = registry.NativeKernel(
        directory=Path(__file__).resolve().parent / "native" / "echo",
        sources=MappingProxyType({"legacy": ("echo.c",), "current": ("echo.c",)}),
        headers=("echo_abi.h",),
        call_unit="call.c",
        abi_header="echo_abi.h",
        entry_points=("echo_abi_version", "echo_name", "echo_check", "echo_run"),
        abi_version=1,
        library="echo",
    )

    def build_case(self, src, small=False):
        raise NotImplementedError("the echo op is only judged, never generated")


OP = Echo()
