"""The C files depend one way, as tests/test_layout.py holds the Python imports.

Convolution's kernel: the ABI entries (convcheck.c) on the checks, the checks on the
loops, the loops on the elements; no file includes a header that declares what a file
above it defines. Above the kernel, its call unit (call.c) on the ABI header and the
worker's unit header; above all, the generic worker (worker_main.c), which includes no
op's header and names no op's parameter."""

import re

import pytest

from convcheck.native.build import SOURCE_DIR as WORKER_DIR
from convcheck.native.build import UNIT_HEADER, WORKER_HEADERS, WORKER_SOURCES
from convcheck.ops.convolution.native import KERNEL

SOURCE_DIR = KERNEL.directory

# Lowest first; a file may see what its own layer and the layers below define.
LAYERS = (
    ("elements.c", "tensors.c"),
    ("conv_loops.c",),
    ("checks_shared.c", "checks_legacy.c", "checks_current.c"),
    ("convcheck.c",),
)
_INCLUDE = re.compile(r'^#include "([^"]+)"', re.MULTILINE)
_NAME = re.compile(r"\b(cc_\w+)\b")
# A definition with external linkage: a function's or a global's, at the start of a line.
_DEFINITION = re.compile(
    r"^(?!static\b)[A-Za-z_][\w \*]*?\b(cc_\w+)\s*(?:\([^;{]*\)\s*\{|\[\]\s*=|=)", re.MULTILINE
)


def _headers(name: str, seen: frozenset[str] = frozenset()) -> frozenset[str]:
    """The local headers ``name`` includes, directly or through other headers."""
    found = set(seen)
    for header in _INCLUDE.findall((SOURCE_DIR / name).read_text()):
        if header not in found:
            found |= _headers(header, frozenset(found | {header}))
    return frozenset(found)


def _definer() -> dict[str, str]:
    """Each name a kernel file defines for the others, and that file."""
    return {
        symbol: source
        for layer in LAYERS
        for source in layer
        for symbol in _DEFINITION.findall((SOURCE_DIR / source).read_text())
    }


@pytest.mark.parametrize("level", range(len(LAYERS)), ids=lambda level: LAYERS[level][0])
def test_no_file_sees_what_a_file_above_it_defines(level):
    above = {source for layer in LAYERS[level + 1 :] for source in layer}
    definer = _definer()
    for source in LAYERS[level]:
        seen = set()
        for header in _headers(source):
            seen |= set(_NAME.findall((SOURCE_DIR / header).read_text()))
        reaching_up = sorted(
            f"{name} ({definer[name]})" for name in seen if definer.get(name) in above
        )
        assert not reaching_up, f"{source} includes the declarations of {reaching_up}"


def test_the_layers_name_every_kernel_file():
    kernel = {path.name for path in SOURCE_DIR.glob("*.c")} - {KERNEL.call_unit}
    assert {source for layer in LAYERS for source in layer} == kernel
    assert len(_definer()) > 10  # the definitions are found at all


def test_the_call_unit_sees_the_abi_and_not_the_kernel_inside():
    included = _INCLUDE.findall((SOURCE_DIR / KERNEL.call_unit).read_text())
    assert KERNEL.abi_header in included and UNIT_HEADER in included
    assert set(included) & set(KERNEL.headers) == {KERNEL.abi_header}
    assert _DEFINITION.findall((SOURCE_DIR / KERNEL.call_unit).read_text()) == []


# Convolution's parameters and the names of its ABI: none is the generic worker's business.
_CONVOLUTION = re.compile(
    r"\b(?:groups|dilation|output_padding|transposed|stride|padding|weight|bias|"
    r"convcheck_call|convcheck_result|convcheck_tensor|convcheck_abi)\b"
)


@pytest.mark.parametrize("name", [*WORKER_SOURCES, *WORKER_HEADERS, UNIT_HEADER])
def test_the_generic_worker_names_no_convolution_parameter(name):
    text = (WORKER_DIR / name).read_text()
    code = re.sub(r"/\*.*?\*/", "", text, flags=re.DOTALL)
    assert _CONVOLUTION.findall(code) == []
    own = {UNIT_HEADER, *WORKER_HEADERS, "worker_protocol.h", "worker_unit.h"}
    assert set(_INCLUDE.findall(text)) <= own
