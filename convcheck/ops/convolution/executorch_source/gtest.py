"""Running exported GoogleTests (``convcheck export gtest``) against a user's ExecuTorch
checkout, sanitized.

The tests are compiled with the translation units the source target compiles
(``build.CONVOLUTION.sources``), ExecuTorch's test utilities (``TensorFactory``,
``TestUtil.h``), the fixture ``op_convolution_test.cpp`` declares (rewritten here: that
file's generated operator header needs ExecuTorch's codegen), and GoogleTest from the
system (Debian: ``libgtest-dev`` and ``libgmock-dev``, whose matchers the test utilities
use). Each test runs in its own process: with ``-fno-sanitize-recover`` a sanitizer
report ends the process, and the tests after it would never run.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from convcheck.errors import ConvcheckError
from convcheck.native.build import compiler, compiler_version, first_error
from convcheck.ops.convolution.executorch_source.build import (
    C10_INCLUDE,
    CONVOLUTION,
    FLAGS,
    checkout,
)

# Beyond the kernel's units: the runtime's init, the default platform layer (the source
# target brings its own in its adapter), and the tensor comparisons of the test utilities.
TEST_SOURCES = (
    "runtime/platform/runtime.cpp",
    "runtime/platform/default/posix.cpp",
    "runtime/core/exec_aten/testing_util/tensor_util.cpp",
)
TEST_FLAGS = tuple(flag for flag in FLAGS if flag not in ("-shared", "-fPIC"))

# The fixture of kernels/test/op_convolution_test.cpp, calling the portable kernel directly.
HARNESS = """\
#include <algorithm>
#include <cstdint>
#include <iterator>

#include <executorch/kernels/test/TestUtil.h>
#include <executorch/runtime/core/exec_aten/exec_aten.h>
#include <executorch/runtime/core/exec_aten/testing_util/tensor_factory.h>
#include <executorch/runtime/core/exec_aten/testing_util/tensor_util.h>
#include <gtest/gtest.h>

using executorch::aten::ArrayRef;
using executorch::aten::IntArrayRef;
using executorch::aten::ScalarType;
using executorch::aten::Tensor;
using executorch::runtime::TensorShapeDynamism;
using std::optional;
using torch::executor::testing::TensorFactory;

namespace torch::executor::native {
Tensor& convolution_out(KernelRuntimeContext& ctx, const Tensor& in, const Tensor& weight,
                        const optional<Tensor>& bias, IntArrayRef stride, IntArrayRef padding,
                        IntArrayRef dilation, bool transposed, IntArrayRef output_padding,
                        int64_t groups, Tensor& out);
}

class OpConvOutTest : public OperatorTest {
 protected:
  Tensor& op_convolution_out(const Tensor& input, const Tensor& weight,
                             const optional<Tensor>& bias, ArrayRef<int64_t> stride,
                             ArrayRef<int64_t> padding, ArrayRef<int64_t> dilation,
                             bool transposed, ArrayRef<int64_t> output_padding,
                             int64_t groups, Tensor& out) {
    return torch::executor::native::convolution_out(context_, input, weight, bias, stride,
                                                    padding, dilation, transposed,
                                                    output_padding, groups, out);
  }
};

#include TESTS
"""


@dataclass(frozen=True)
class TestResult:
    name: str
    passed: bool
    # "" when passed; else the sanitizer's report (to the test's own frame), or
    # GoogleTest's failure lines; paths relative to the checkout's parent
    report: str
    sanitizer: bool

    @property
    def function(self) -> str | None:
        """The function of the sanitizer's first frame, without namespace or arguments."""
        frame = re.search(r"#0 0x[0-9a-f]+ in (.+)", self.report)
        if frame is None:
            return None
        # "void ns::name<int, ...>(int const*, ...) file:line": the name without its
        # return type, template arguments, parameters and namespace
        declared = frame.group(1).split("(")[0].split("<")[0]
        return declared.split()[-1].rpartition("::")[2]

    def describe(self) -> str:
        if self.passed:
            return f"PASS  {self.name}"
        how = "sanitizer" if self.sanitizer else "expectation"
        first = next((line for line in self.report.splitlines() if line.strip()), "")
        return f"FAIL  {self.name}: {how}: {first.strip()}"


def build(source: str | os.PathLike, tests: Path, scratch: Path) -> Path:
    """The test binary for ``tests`` (a file of ``TEST_F(OpConvOutTest, ...)``) against the
    checkout ``source``, built in ``scratch``."""
    root = checkout(source)
    if not tests.is_file():
        raise ConvcheckError(f"--gtest {tests}: no such file")
    cxx = compiler("C++", ("clang++", "g++"))
    os.symlink(root, scratch / "executorch")
    harness = scratch / "harness.cpp"
    harness.write_text(HARNESS)
    binary = scratch / "convcheck-gtest"
    command = [
        cxx,
        *TEST_FLAGS,
        f"-I{scratch}",
        f"-I{root / C10_INCLUDE}",
        f'-DTESTS="{tests.resolve()}"',
        "-o",
        str(binary),
        str(harness),
        *(str(root / relative) for relative in (*CONVOLUTION.sources, *TEST_SOURCES)),
        "-lgmock",
        "-lgtest",
        "-lgtest_main",
        "-pthread",
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        hint = (
            " (GoogleTest: apt-get install libgtest-dev libgmock-dev)"
            if "gtest" in done.stderr
            else ""
        )
        raise ConvcheckError(
            f"building the tests {tests} against {root} with {cxx}: "
            f"{first_error(done.stderr)}{hint}"
        )
    return binary


_SANITIZER = re.compile(r"runtime error:|ERROR: AddressSanitizer|ERROR: UndefinedBehavior")


def _trim(text: str, shown: dict[str, str]) -> str:
    """A sanitizer report from its error line to the test's own frame, machine paths
    replaced by what they are (``shown``: path -> name)."""
    lines = text.splitlines()
    kept = []
    for line in lines:
        kept.append(line)
        if "TestBody" in line or line.startswith("SUMMARY"):
            break
    trimmed = "\n".join(kept)
    for path, name in sorted(shown.items(), key=lambda item: -len(item[0])):
        trimmed = trimmed.replace(path, name)
    return trimmed


def run(binary: Path, shown: dict[str, str], timeout: float = 120) -> list[TestResult]:
    """Each test of ``binary`` in its own process, in the order the file has them;
    ``shown`` names the paths a report may hold (path -> name)."""
    listed = subprocess.run(
        [str(binary), "--gtest_list_tests"], capture_output=True, text=True, check=True
    ).stdout
    names, suite = [], ""
    for line in listed.splitlines():
        if not line.startswith(" "):
            suite = line.strip()
        else:
            names.append(suite + line.split("#")[0].strip())
    env = dict(os.environ, UBSAN_OPTIONS="print_stacktrace=1")
    results = []
    for name in names:
        try:
            done = subprocess.run(
                [str(binary), f"--gtest_filter={name}"],
                capture_output=True,
                text=True,
                check=False,
                env=env,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            results.append(TestResult(name, False, f"no end after {timeout:g} s", False))
            continue
        text = done.stdout + done.stderr
        found = _SANITIZER.search(text)
        if done.returncode == 0:
            results.append(TestResult(name, True, "", False))
        elif found:
            start = text.rfind("\n", 0, found.start()) + 1
            results.append(TestResult(name, False, _trim(text[start:], shown), True))
        else:
            failure = [
                line for line in text.splitlines() if "Failure" in line or "Expected" in line
            ]
            if done.returncode < 0:  # an abort (ET_CHECK) or a signal: its last words
                last = [line for line in text.splitlines() if line.strip()][-1:]
                failure = [f"{signal.Signals(-done.returncode).name}: {' '.join(last)}"]
            results.append(TestResult(name, False, _trim("\n".join(failure), shown), False))
    return results


def run_tests(source: str | os.PathLike, tests: Path) -> list[TestResult]:
    """Build ``tests`` against the checkout ``source`` and run each."""
    root = checkout(source)
    with tempfile.TemporaryDirectory(prefix="convcheck-gtest-") as scratch:
        shown = {
            f"{scratch}/": "",
            f"{root}/": "executorch/",
            str(tests.resolve()): tests.name,
        }
        return run(build(root, tests, Path(scratch)), shown)


def environment(source: str | os.PathLike, commit: str | None) -> dict[str, str]:
    """What an issue report says the tests ran on: ExecuTorch's commit (``commit``, else
    the checkout's own if it is a git work tree), the compiler and the flags."""
    root = checkout(source)
    if commit is None:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            check=False,
        )
        commit = head.stdout.strip() if head.returncode == 0 else "(not a git checkout)"
    cxx = compiler("C++", ("clang++", "g++"))
    return {
        "ExecuTorch commit": commit,
        "compiler": compiler_version(cxx).splitlines()[0],
        "flags": " ".join(TEST_FLAGS),
    }
