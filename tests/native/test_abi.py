"""Libraries that do not speak the ABI are refused in one line, before any worker starts;
the documented example target works as a target."""

from pathlib import Path

import pytest
from builders import conv, conv_t, t

from convcheck.errors import ConvcheckError
from convcheck.native import NativeJudge
from convcheck.native.build import compile_shared

NATIVE_DIR = Path(__file__).resolve().parents[2] / "convcheck" / "ops" / "convolution" / "native"
EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "example_target.c"

ENTRIES = """
#include <stdint.h>
typedef struct convcheck_call convcheck_call;
typedef struct convcheck_result convcheck_result;
const char *convcheck_name(void) { return "bad"; }
int32_t convcheck_check(const convcheck_call *c, convcheck_result *r) { return c && r ? 0 : 0; }
int32_t convcheck_run(const convcheck_call *c, convcheck_result *r) { return c && r ? 0 : 0; }
"""
BAD_LIBRARIES = {
    "missing_symbols": (
        "int convcheck_abi_version(void) { return 1; }\n",
        "missing symbol convcheck_name (is it built against convcheck_abi.h?)",
    ),
    "wrong_version": (
        ENTRIES + "int32_t convcheck_abi_version(void) { return 2; }\n",
        "ABI version 2, convcheck speaks version 1",
    ),
}


def _library(tmp_path: Path, source: str, sanitized: bool = False) -> Path:
    path = tmp_path / "bad.c"
    path.write_text(source)
    return compile_shared([path], "bad", sanitized=sanitized)


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CONVCHECK_CACHE", str(tmp_path / "cache"))


@pytest.mark.parametrize("name", BAD_LIBRARIES)
@pytest.mark.parametrize("sanitized", [False, True])
def test_bad_library_is_one_line_error(tmp_path, name, sanitized):
    source, expected = BAD_LIBRARIES[name]
    library = _library(tmp_path, source, sanitized)
    with pytest.raises(ConvcheckError) as raised:
        NativeJudge(target=str(library))
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith(f"target {library}: ")
    assert expected in message


def test_not_a_library(tmp_path):
    path = tmp_path / "notes.so"
    path.write_text("not an ELF file\n")
    with pytest.raises(ConvcheckError, match=r"^target .*notes\.so: ") as raised:
        NativeJudge(target=str(path))
    assert "\n" not in str(raised.value)


def test_missing_file(tmp_path):
    with pytest.raises(ConvcheckError, match="no such file"):
        NativeJudge(target=str(tmp_path / "absent.so"))


def test_unknown_revision():
    with pytest.raises(ConvcheckError, match="revision='newest' must be one of legacy, current"):
        NativeJudge("newest")


@pytest.mark.parametrize("sanitized", [False, True])
def test_example_target_from_the_docs(tmp_path, sanitized):
    source = tmp_path / "example_target.c"
    source.write_text(EXAMPLE.read_text())
    (tmp_path / "convcheck_abi.h").write_text((NATIVE_DIR / "convcheck_abi.h").read_text())
    library = compile_shared([source], "example", sanitized=sanitized)
    cases = [conv(), conv_t(), conv(groups=0)]
    with NativeJudge(target=str(library)) as judge:
        assert judge.name == "example target"
        assert judge.sanitized == sanitized
        assert [o.describe() for o in judge.check(cases)] == [
            "accept [1, 4, 3]",
            "accept [1, 2, 7]",
            "accept [1, 4, 3]",  # it checks nothing: that is what fuzzing it shows
        ]
        outcome = judge.run([conv()])[0]
        assert outcome.values == (0.0,) * 12


@pytest.mark.parametrize("worker", ["c", "python"])
def test_a_target_that_resizes_out_to_another_rank_is_judged_not_a_tool_error(
    tmp_path, worker, monkeypatch
):
    """The example accepts a 1-D call whose out is declared 4-D, resizing out to 3 dims:
    the kernel's answer (a finding against the model), not convcheck's failure."""
    from convcheck.judges import Judges

    if worker == "python":  # the worker where no C compiler is found
        monkeypatch.setattr("convcheck.native.judge.build_worker", lambda *a, **k: None)
    source = tmp_path / "example_target.c"
    source.write_text(EXAMPLE.read_text())
    (tmp_path / "convcheck_abi.h").write_text((NATIVE_DIR / "convcheck_abi.h").read_text())
    library = compile_shared([source], "example", sanitized=False)
    case = conv(out=t(1, 4, 3, 1))
    with Judges("current", target=str(library), use_torch=False) as judges:
        (found,) = judges.evaluate([case])
    kinds = {f.kind for f in found}
    assert "tool-error" not in kinds, [f.describe() for f in found]
    assert kinds, "the example's acceptance of a rank it cannot have is a finding"
