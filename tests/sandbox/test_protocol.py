"""The worker protocol has one definition (``convcheck/sandbox/protocol.py``): the C
worker's header says what the module says, neither worker spells a message kind of its
own, and an edit of the module rebuilds the C worker."""

import re
import subprocess
from pathlib import Path

import pytest

import convcheck
from convcheck.errors import ConvcheckError
from convcheck.native import build, wire
from convcheck.native.dtypes import DTYPE_CODES
from convcheck.sandbox import protocol

PACKAGE = Path(convcheck.__file__).parent
PYTHON_WORKER = PACKAGE / "_worker_main.py"
C_WORKER = [build.SOURCE_DIR / name for name in build.WORKER_SOURCES]
# What the Python worker takes from the module: every message kind but the parent's FORK,
# and the limits a program worker shares; the C worker takes every name of its header.
PYTHON_WORKER_NAMES = sorted(
    {name for name, value in vars(protocol).items() if isinstance(value, bytes)} - {"FORK"}
    | {"PRIVATE_FD_LOW", "PRIVATE_FD_TOP", "REPORT_LIMIT", "SITE_LIMIT"}
)


def _python_values() -> dict[str, object]:
    """Each name of the C header and the value Python gives it."""
    header = build.worker_protocol_header()
    values: dict[str, object] = {}
    for name in re.findall(r"^(?:#define|enum \{) CONVCHECK_(\w+)[ =]", header, re.MULTILINE):
        prefix, _, rest = name.partition("_")
        spelled = rest.lower().replace("_", "-")
        if prefix == "VERDICT":
            values[name] = wire.VERDICTS.index(spelled)
        elif prefix == "ARG":
            values[name] = wire.ARG_KINDS.index(spelled)
        elif name == "DTYPE_COUNT":
            values[name] = len(DTYPE_CODES)
        elif prefix == "DTYPE":
            values[name] = DTYPE_CODES[spelled]
        elif prefix == "TENSOR":
            values[name] = getattr(wire, name)
        else:
            values[name] = getattr(protocol, name)
    return values


def test_the_c_header_says_what_the_module_says(tmp_path):
    try:
        cc = build.compiler()
    except ConvcheckError as exc:
        pytest.skip(str(exc))
    values = _python_values()
    assert {"STARTED", "FORK_REFUSED", "SITE_LIMIT", "VERDICT_TOOL_ERROR"} <= set(values)
    assert {"ARG_OPTIONAL_INT", "TENSOR_OUTPUT", "DTYPE_BFLOAT16", "DTYPE_COUNT"} <= set(values)
    formats = {bytes: "%c", str: "%s", int: "%d"}
    prints = [
        f'    printf("{name}={formats[type(value)]}\\n", CONVCHECK_{name});'
        for name, value in values.items()
    ]
    (tmp_path / build.WORKER_PROTOCOL_HEADER).write_text(build.worker_protocol_header())
    program = tmp_path / "print.c"
    program.write_text(
        f'#include <stdio.h>\n#include "{build.WORKER_PROTOCOL_HEADER}"\n'
        "int main(void) {\n" + "\n".join(prints) + "\n    return 0;\n}\n"
    )
    subprocess.run([cc, "-std=c11", "-o", tmp_path / "print", program], check=True)
    printed = subprocess.run([tmp_path / "print"], capture_output=True, text=True, check=True)
    seen = dict(line.split("=", 1) for line in printed.stdout.splitlines())
    assert seen == {
        name: value.decode() if isinstance(value, bytes) else str(value)
        for name, value in values.items()
    }


def test_the_c_worker_takes_every_name_from_its_header():
    source = "".join(path.read_text() for path in C_WORKER)
    assert f'#include "{build.WORKER_PROTOCOL_HEADER}"' in source
    assert [name for name in _python_values() if f"CONVCHECK_{name}" not in source] == []


def test_the_python_worker_takes_the_protocol_from_the_module():
    source = PYTHON_WORKER.read_text()
    assert "END_OF_LINE" in PYTHON_WORKER_NAMES
    assert [name for name in PYTHON_WORKER_NAMES if f"protocol.{name}" not in source] == []


@pytest.mark.parametrize(
    ("path", "spelled"),
    [
        (PYTHON_WORKER, r'b"[A-Z]|\b(?:8192|4096|200)\b'),
        *((path, r"""'[A-Z]'|"[A-Z](?:%|")|\b(?:8192|200)\b""") for path in C_WORKER),
    ],
    ids=["python", *(path.name for path in C_WORKER)],
)
def test_no_worker_spells_a_message_kind_or_a_limit_itself(path, spelled):
    code = re.sub(r"/\*.*?\*/|#[^\n]*|\"\"\".*?\"\"\"", "", path.read_text(), flags=re.DOTALL)
    assert re.findall(spelled, code) == []


def test_an_edit_of_the_protocol_rebuilds_the_c_worker(tmp_path, monkeypatch):
    try:
        build.compiler()
    except ConvcheckError as exc:
        pytest.skip(str(exc))
    monkeypatch.setenv("CONVCHECK_CACHE", str(tmp_path))
    before = build.build_worker(sanitized=False)
    monkeypatch.setattr(protocol, "SITE_LIMIT", protocol.SITE_LIMIT + 1)
    after = build.build_worker(sanitized=False)
    assert after != before
    assert f"CONVCHECK_SITE_LIMIT = {protocol.SITE_LIMIT}" in build.worker_protocol_header()
