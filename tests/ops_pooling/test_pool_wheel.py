"""The pooling ops in ExecuTorch 1.5.1 from PyPI: the crafted programs are what exir would
emit, the wheel's kernels do what the issue measured on a checkout, and the legacy model
(made unsanitized by ``expected_outcome``) agrees with them on generated cases.

The wheel's kernel is ExecuTorch's own build; the model is our reading of its source. A
disagreement means the model (or that reading) is wrong; the message has the case's JSON.
"""

import collections
import dataclasses

import pytest
from agreement import unexpected
from pool_builders import avg, max_pool
from programs import without_memory_plan

from convcheck import engines, registry
from convcheck.campaign import Budget, Campaign
from convcheck.fixedint import INT64_MIN
from convcheck.generate import random_cases
from convcheck.judges import Judges

INSTALL = "pip install executorch==1.5.1 --no-deps flatbuffers ruamel.yaml tabulate"
pytest.importorskip("executorch", reason=INSTALL)
torch = pytest.importorskip("torch")

from convcheck.executorch_wheel import available  # noqa: E402
from convcheck.executorch_wheel.memory import Limits  # noqa: E402
from convcheck.executorch_wheel.runtime import PROBE, PROBE_STATIC, WHOLE  # noqa: E402
from convcheck.ops.pooling.executorch_target import PoolingWheelJudge  # noqa: E402
from convcheck.ops.pooling.executorch_target.expected import expected_outcome  # noqa: E402
from convcheck.ops.pooling.executorch_target.program import make_plan, program  # noqa: E402

if not available():
    pytest.skip(INSTALL, allow_module_level=True)

OPS = ("avg_pool2d", "max_pool2d_with_indices")
CL = (0, 2, 3, 1)


@pytest.fixture(scope="module")
def judges():
    with (
        PoolingWheelJudge("avg_pool2d", jobs=2, timeout=30.0) as avg_judge,
        PoolingWheelJudge("max_pool2d_with_indices", jobs=2, timeout=30.0) as max_judge,
    ):
        yield {"avg_pool2d": avg_judge, "max_pool2d_with_indices": max_judge}


# -- the programs ------------------------------------------------------------------------

EXPORTABLE = {
    "avg": avg(sizes=(1, 2, 5, 5), kernel=(3, 3), stride=(2,), padding=(1,)),
    "avg_3d_ceil_no_pad_count": avg(
        sizes=(2, 5, 5),
        kernel=(3,),
        stride=(2,),
        padding=(1,),
        ceil_mode=True,
        count_include_pad=False,
    ),
    "avg_override": avg(sizes=(1, 1, 6, 6), kernel=(4, 4), stride=(2,), padding=(2,), divisor=3),
    "max_dilated": max_pool(sizes=(1, 2, 7, 7), kernel=(3, 2), stride=(2, 1), dilation=(2, 1)),
    "max_3d_ceil": max_pool(sizes=(2, 5, 5), kernel=(2,), padding=(1,), ceil_mode=True),
}


@pytest.fixture(scope="module")
def exir():
    exir = pytest.importorskip("executorch.exir", reason=INSTALL)
    from executorch.exir._serialize._flatbuffer_program import _flatbuffer_to_program

    return exir.to_edge, _flatbuffer_to_program


def exported(exir, case):
    to_edge, read = exir
    lists = [list(case.kernel_size), list(case.stride), list(case.padding)]

    class Pool(torch.nn.Module):
        def forward(self, x):
            if case.OP == "avg_pool2d":
                return torch.ops.aten.avg_pool2d.default(
                    x, *lists, case.ceil_mode, case.count_include_pad, case.divisor_override
                )
            return torch.ops.aten.max_pool2d_with_indices.default(
                x, *lists, list(case.dilation), case.ceil_mode
            )

    exported_program = torch.export.export(Pool(), (torch.zeros(case.input.sizes),))
    return read(to_edge(exported_program).to_executorch().buffer)


@pytest.mark.parametrize("name", sorted(EXPORTABLE))
def test_a_crafted_program_is_the_exported_one(exir, name):
    case = EXPORTABLE[name]
    crafted = exir[1](program(case, make_plan(case, Limits()), WHOLE))
    assert without_memory_plan(crafted) == without_memory_plan(exported(exir, case))


@pytest.mark.parametrize("op", OPS)
def test_crafted_programs_pass_the_flatbuffer_verifier(op):
    from executorch.extension.pybindings import _C

    for case in random_cases(99, 200, op=op):
        plan = make_plan(case, Limits())
        for form in (WHOLE,) if plan.whole else (PROBE, PROBE_STATIC):
            try:
                _C._load_program_from_buffer(
                    program(case, plan, form),
                    program_verification=_C.Verification.InternalConsistency,
                )
            except RuntimeError as exc:  # pragma: no cover - the assertion says why
                pytest.fail(f"{form} program of {case.dumps()} fails verification: {exc}")


# -- what the wheel does -------------------------------------------------------------------

# Each class of the issue on the wheel, with what the wheel answers, written by hand from
# the measurements: no sanitizer, so an overflow goes on silently and a division
# traps. ("accept", sizes) | ("reject", check) | ("crash", kind).
BEHAVIOUR = {
    "avg stride 0": (avg(stride=(0,)), ("crash", "SIGFPE")),
    "max stride 0": (max_pool(stride=(0,)), ("crash", "SIGFPE")),
    "avg INT64_MIN / -1": (
        avg((1, 1, 1), (1,), divisor=-1, dtype="int64", fill=INT64_MIN),
        ("crash", "SIGFPE"),
    ),
    # 3 x INT64_MIN wraps to INT64_MIN: the wrapped sum, divided by -1, traps.
    "avg wrapped sum / -1": (
        avg((1, 1, 3), (1, 3), divisor=-1, dtype="int64", fill=INT64_MIN),
        ("crash", "SIGFPE"),
    ),
    # 2 x INT64_MIN wraps to 0: silent.
    "avg wrapped sum": (
        avg((1, 1, 2), (1, 2), dtype="int64", fill=INT64_MIN),
        ("accept", (1, 1, 1)),
    ),
    "avg unchecked stride, ceil_mode": (
        avg((1, 1, 1), (1,), stride=(INT64_MIN,), ceil_mode=True),
        ("accept", (1, 1, 1)),
    ),
    # 2 * 2^62 wraps to INT64_MIN; (3 - INT64_MIN - 1) as int64 is INT64_MIN + 2, by the
    # stride (the kernel, 3) -3074457345618258602, plus 1, narrowed to int32: 1431655767.
    # So large an out is probed.
    "max huge dilation": (
        max_pool((1, 1, 3, 3), (3,), dilation=(2**62,)),
        ("accept", (1, 1, 1431655767, 1431655767)),
    ),
    # A kernel of 5 on a 1x1 input: (1 - 4 - 1) / -1 + 1 = 5.
    "avg negative stride, kernel past the input": (
        avg((1, 1, 1, 1), (5,), stride=(-1,)),
        ("accept", (1, 1, 5, 5)),
    ),
    # (3 - 0 - 1) / 1 + 1: every tap at the window's start.
    "max dilation 0": (
        max_pool((1, 1, 3, 3), (2,), stride=(1,), dilation=(0,)),
        ("accept", (1, 1, 3, 3)),
    ),
    # Only the first two of the five are read: (3 - 1 - 1) / 1 + 1.
    "max dilation of length 5": (
        max_pool((1, 1, 3, 3), (2,), stride=(1,), dilation=(1, 1, 1, 1, 1)),
        ("accept", (1, 1, 2, 2)),
    ),
    # 2^40 loop iterations: probed for its checks, never run.
    "avg work past limit": (
        avg((1, 1, 1, 1), (2**20,), padding=(2**19,)),
        ("accept", (1, 1, 1, 1)),
    ),
    # An empty out, probed (its input's strides pass int32): the resize to capacity 0
    # succeeds, and the kernel goes on to its dtype switch.
    "avg empty out, probed": (
        avg((0, 1, 2, 2**30), (1,), dtype="int32"),
        ("reject", "dtype.unsupported"),
    ),
    "avg padding past half the kernel": (avg(padding=(2,)), ("reject", "padding.gt_half_kernel")),
    "max indices not int64": (
        dataclasses.replace(max_pool(), indices=max_pool().out),
        ("reject", "indices.dtype"),
    ),
}


def _said(outcome):
    if outcome.verdict == "accept":
        return ("accept", outcome.out_sizes)
    if outcome.verdict == "reject":
        return ("reject", outcome.check)
    return (outcome.verdict.value, outcome.crash_kind)


@pytest.fixture(scope="module")
def behaviour(judges):
    """Each case of ``BEHAVIOUR`` judged by the wheel, in one batch per op."""
    judged = {}
    for op in OPS:
        names = [name for name, (case, _) in BEHAVIOUR.items() if case.OP == op]
        outcomes = judges[op].run([BEHAVIOUR[name][0] for name in names])
        judged.update(zip(names, outcomes, strict=True))
    return judged


@pytest.mark.parametrize("name", sorted(BEHAVIOUR))
def test_the_wheel_does_what_was_measured_and_the_model_says_so(behaviour, name):
    case, wanted = BEHAVIOUR[name]
    assert _said(behaviour[name]) == wanted, behaviour[name].detail
    assert _said(expected_outcome(case)) == wanted


def test_a_wrapped_sum_is_what_the_wheel_divides(behaviour):
    """Two INT64_MIN make 0 in int64: the wheel's average is 0, not INT64_MIN."""
    assert behaviour["avg wrapped sum"].values == (0.0,)


# -- the model agrees ----------------------------------------------------------------------

SEED = 2029


@pytest.mark.parametrize("op", OPS)
@pytest.mark.slow  # make test keeps to its budget: the behaviour above stands for it
@pytest.mark.parametrize("count", [2000])
def test_the_wheel_agrees_with_the_legacy_model(judges, op, count):
    # Small cases run whole (values); the others reach the edges (and probes).
    small = count * 3 // 4
    cases = random_cases(SEED, small, small=True, op=op) + random_cases(SEED, count - small, op=op)
    judged = list(zip(cases, judges[op].run(cases), strict=True))
    bad, example = unexpected(judged, expected_outcome)
    assert not bad, f"model vs executorch: {dict(bad)}; first cases: {example}"
    kinds = collections.Counter(actual.category for _, actual in judged)
    assert kinds["accept"] > count // 4
    assert len({k for k in kinds if k.startswith("reject")}) >= 6, sorted(kinds)
    assert any(not make_plan(case, Limits()).whole for case, _ in judged)  # probes


# -- a campaign ------------------------------------------------------------------------

# Legacy's classes that a run on the wheel shows beside torch: its crashes (a trap, not a
# sanitizer report), and what the model and torch see of the checks. Not the loops' work
# limit (probed, never run) nor the int64 sum and the padded area (silent without a
# sanitizer).
WHEEL_VISIBLE = {
    "avg_pool2d": {
        "stride 0 divides by zero",
        "INT64_MIN / -1 with divisor_override",
        "unchecked stride overflows the output size",
        "negative stride, or a stride list of any length, accepted",
        "kernel larger than the input accepted",
    },
    "max_pool2d_with_indices": {
        "stride 0 divides by zero",
        "unchecked stride overflows the output size",
        "unchecked dilation overflows the output size",
        "dilation 0, negative, or a list of any length, accepted",
        "kernel larger than the input accepted",
    },
}


@pytest.mark.slow
@pytest.mark.parametrize("op", OPS)
def test_a_campaign_on_the_wheel_finds_its_classes_and_no_infidelity(op):
    with Judges("legacy", op=op, target="executorch", jobs=2) as judges:
        run = Campaign(judges, budget=Budget(cases=3000))
        run.explore(engines.load("random"), 3)
    found = list(run.found.values())
    assert [f.key for f in found if f.kind == "infidelity"] == []
    classes = {registry.get(op).bug_class(f.signature) for f in found}
    assert WHEEL_VISIBLE[op] <= classes, sorted(map(str, classes))
