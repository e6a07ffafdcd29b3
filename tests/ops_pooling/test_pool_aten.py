"""ATen's check path for the pooling ops (``convcheck.ops.pooling.aten``) held to real
torch, and ``current`` held to that path.

Real torch runs in a child process (it dies on some calls), one call a line; a death
answers that call and the child is started again. The calls are the ops' own
construction with every tensor shrunk to a few elements (real torch allocates them),
their integers left at their edges.
"""

import json
import math
import signal
import subprocess
import sys

import pytest

from convcheck import model, registry
from convcheck.case import TensorSpec
from convcheck.generate import RandomSource
from convcheck.ops.pooling import aten
from convcheck.ops.pooling.differences import explain_difference
from convcheck.outcome import REJECT

pytest.importorskip("torch")

OPS = ("avg_pool2d", "max_pool2d_with_indices")

_CHILD = """
import json, sys
from convcheck import registry
from convcheck.ops.pooling import aten
for line in sys.stdin:
    op, text = line.split("\\t", 1)
    outcome = aten.call_torch(registry.loads_case(text, op=op), op)
    print(json.dumps(outcome.describe()), flush=True)
"""


def real_torch(op, cases):
    """Real torch's answer to each case (``Outcome.describe``), a death read as the
    signal's name."""
    answers = []
    while len(answers) < len(cases):
        child = subprocess.Popen(
            [sys.executable, "-c", _CHILD],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert child.stdin is not None and child.stdout is not None
        with child:
            for case in cases[len(answers) :]:
                child.stdin.write(f"{op}\t{case.dumps()}\n")
                child.stdin.flush()
                line = child.stdout.readline()
                if not line:
                    child.wait()
                    answers.append(f"crash {signal.Signals(-child.returncode).name}")
                    break
                answers.append(json.loads(line))
            child.stdin.close()
    return answers


def small(case):
    """The case with its tensors a few elements each (real torch allocates them)."""
    sizes = tuple(min(s, 5) for s in case.input.sizes)
    return case.replace(input=TensorSpec(sizes, case.input.dtype, case.input.dim_order))


def generated(op, count, seed):
    src = RandomSource(seed)
    return [small(registry.get(op).build_case(src)) for _ in range(count)]


# Real torch allocates what it accepts: a larger output is compared by the path alone.
MAX_OUT = 1 << 20


def allocatable(op, case):
    outcome = aten.check(case, op)
    return outcome.verdict != "accept" or math.prod(outcome.out_sizes) <= MAX_OUT


def path(op, case):
    return aten.check(case, op).describe()


@pytest.mark.parametrize(
    "op, count",
    [(op, 300) for op in OPS] + [pytest.param(op, 2000, marks=pytest.mark.slow) for op in OPS],
)
def test_the_check_path_is_real_torch(op, count):
    cases = [case for case in generated(op, count, seed=29) if allocatable(op, case)]
    expected = [path(op, case) for case in cases]
    differ = [
        (case.dumps(), want, got)
        for case, want, got in zip(cases, expected, real_torch(op, cases), strict=True)
        if want != got
    ]
    assert differ == []
    # The calls reach past the first checks: accepts, and most of the check ids.
    verdicts = {answer.split()[0] + " " + answer.split()[1] for answer in expected}
    assert sum(answer.startswith("accept") for answer in expected) > count // 10
    assert len(verdicts) > 6, verdicts


def test_torch_dies_on_int64_min_over_minus_1():
    """Not the check path's to see (values), but torch's own bug, beside legacy's class
    "INT64_MIN / -1 with divisor_override": real torch dies of it."""
    child = subprocess.run(
        [sys.executable, "-c", _DIVIDE],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    assert child.returncode == -signal.SIGFPE


_DIVIDE = """
import torch
x = torch.full((1, 1, 1, 1), -2**63, dtype=torch.int64)
torch.ops.aten.avg_pool2d(x, [1, 1], [1, 1], [0, 0], False, True, -1)
"""


@pytest.mark.parametrize("op", OPS)
def test_current_is_atens_check_path_but_for_its_differences(op):
    """Where the current model and torch's path part, an intentional difference says why
    (a kernel's own out, its 32-bit sizes); they never part the other way."""
    unexplained = []
    for case in generated(op, 3000, seed=30):
        kernel = model.run(case, "current").outcome
        torch = aten.check(case, op)
        if kernel.verdict == torch.verdict == REJECT or kernel.same_answer(torch):
            continue
        if not explain_difference(case, "current", kernel, torch):
            unexplained.append((case.dumps(), kernel.describe(), torch.describe()))
    assert unexplained == []
