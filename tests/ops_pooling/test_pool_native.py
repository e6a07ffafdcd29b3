"""The pooling ops' own C kernel (``convcheck/ops/pooling/native``), judged through the
generic C worker: it answers as the model does on the same generated calls, its values
are the pooling of the inputs every judge is given, and legacy's arithmetic bugs crash
the sanitized build where issue 29 says they do."""

import collections
import importlib

import numpy as np
import pytest
from agreement import disagreements
from pool_builders import avg, max_pool

from convcheck import registry
from convcheck.fixedint import INT64_MIN
from convcheck.generate import random_cases
from convcheck.judges import Judges, is_small
from convcheck.native import NativeJudge
from convcheck.native.limits import RunLimits
from convcheck.ops.pooling.legacy import WALKED_OUT_ELEMENTS
from convcheck.values import logical_values

OPS = ("avg_pool2d", "max_pool2d_with_indices")
CASES_PER_REVISION = 20_000


@pytest.fixture(scope="module", params=[(op, r) for op in OPS for r in ("legacy", "current")])
def judged(request):
    op, revision = request.param
    cases = random_cases(seed=29, count=CASES_PER_REVISION, op=op)
    with NativeJudge(revision, op=op, jobs=2) as judge:
        checked = list(zip(cases, judge.check(cases), strict=True))
        small = [c for c, o in checked if o.verdict == "accept" and is_small(c)]
        ran = list(zip(small, judge.run(small), strict=True))
    return op, revision, checked, ran


def test_its_check_entry_answers_as_the_model(judged):
    op, revision, checked, _ = judged
    bad, example = disagreements(revision, checked, with_loops=False)
    assert not bad, f"{op} {revision}: {dict(bad)}; first cases: {example}"
    verdicts = collections.Counter(o.category for _, o in checked)
    assert verdicts["accept"] > 2000 and len(verdicts) >= 12, verdicts


def test_its_run_entry_answers_as_the_model(judged):
    op, revision, _, ran = judged
    bad, example = disagreements(revision, ran, with_loops=True)
    assert not bad, f"{op} {revision}: {dict(bad)}; first cases: {example}"
    assert sum(o.values is not None for _, o in ran) > 2000


def windows(case, i, out_size):
    """Spatial dim ``i``'s windows as (start, end, padded extent) per output position."""
    k = case.kernel_size[i % len(case.kernel_size)]
    s = case.stride[i % len(case.stride)] if case.stride else k
    p = case.padding[i % len(case.padding)]
    d = case.dilation[i % len(case.dilation)] if getattr(case, "dilation", ()) else 1
    n = case.input.sizes[-2 + i]
    return [(o * s - p, d, k, n, p) for o in range(out_size)]


def pooled(case, out_sizes):
    """What the op computes from the inputs every judge is given, written from its
    definition (ATen's): numpy, not the kernel's loops."""
    x = logical_values(case.input, "input")
    if x.ndim == 3:
        x = x[None]
    out = np.zeros((x.shape[0], x.shape[1], *out_sizes[-2:]))
    for oy, (y0, dy, ky, h, py) in enumerate(windows(case, 0, out_sizes[-2])):
        for ox, (x0, dx, kx, w, px) in enumerate(windows(case, 1, out_sizes[-1])):
            ys = [y0 + t * dy for t in range(ky) if 0 <= y0 + t * dy < h]
            xs = [x0 + t * dx for t in range(kx) if 0 <= x0 + t * dx < w]
            window = x[:, :, ys][:, :, :, xs]
            if hasattr(case, "indices"):
                out[:, :, oy, ox] = window.max(axis=(2, 3))
                continue
            area = (min(y0 + ky, h + py) - y0) * (min(x0 + kx, w + px) - x0)
            inside = window[0, 0].size
            divisor = case.divisor_override or (area if case.count_include_pad else inside)
            out[:, :, oy, ox] = window.sum(axis=(2, 3)) / divisor
    return tuple(out.astype(np.float32).ravel().tolist())


VALUE_CASES = [
    avg(),
    avg(sizes=(2, 3, 5, 5), kernel=(3, 3), stride=(2,), padding=(1,)),
    avg(sizes=(1, 2, 5, 4), kernel=(3, 2), stride=(2, 1), padding=(1, 1), count_include_pad=False),
    avg(sizes=(2, 5, 5), kernel=(3,), stride=(2,), padding=(1,), ceil_mode=True),
    avg(sizes=(1, 1, 6, 6), kernel=(4, 4), stride=(2,), padding=(2,), divisor=3),
    max_pool(),
    max_pool(sizes=(2, 3, 6, 5), kernel=(3, 2), stride=(2, 1), padding=(1,)),
    max_pool(sizes=(1, 2, 7, 7), kernel=(3, 3), stride=(2,), padding=(1,), dilation=(2,)),
    max_pool(sizes=(3, 5, 5), kernel=(2,), ceil_mode=True),
]


@pytest.mark.parametrize("revision", ["legacy", "current"])
@pytest.mark.parametrize("case", VALUE_CASES, ids=lambda case: case.dumps()[:80])
def test_its_values_are_the_pooling_of_the_inputs(case, revision):
    op = type(case).OP
    with NativeJudge(revision, op=op) as judge:
        (outcome,) = judge.run([case])
    assert outcome.verdict == "accept", outcome
    assert outcome.values == pooled(case, outcome.out_sizes)


# Issue 29's arithmetic bugs of legacy, each a call, the sanitizer's kind, and the id
# current refuses the call with.
LEGACY_CRASHES = {
    "avg stride 0": (avg(stride=(0, 0)), "division-by-zero", "stride.range"),
    "max stride 0": (max_pool(stride=(0, 0)), "division-by-zero", "stride.range"),
    "avg stride INT64_MIN, ceil_mode": (
        avg(stride=(INT64_MIN, INT64_MIN), ceil_mode=True),
        "signed-integer-overflow",
        "stride.range",
    ),
    "max dilation 2^62": (
        max_pool(kernel=(3, 3), dilation=(2**62, 2**62)),
        "signed-integer-overflow",
        "dilation.range",
    ),
}


@pytest.mark.parametrize("name", LEGACY_CRASHES)
def test_legacy_crashes_where_issue_29_says_and_current_refuses(name):
    case, kind, check = LEGACY_CRASHES[name]
    op = type(case).OP
    with NativeJudge("legacy", op=op) as judge:
        (crashed,) = judge.check([case])
    assert (crashed.verdict, crashed.crash_kind) == ("crash", kind), crashed
    assert "pool_legacy.c" in crashed.crash_site, crashed
    with NativeJudge("current", op=op) as judge:
        (refused,) = judge.check([case])
    assert (refused.verdict, refused.check) == ("reject", check), refused


@pytest.mark.parametrize("make", [avg, max_pool])
def test_legacys_run_halts_where_its_loops_would_spin_and_currents_answers(make):
    """Input 1x1, kernel 2^20, padding 2^19: accepted, and legacy's loops would visit
    2^40 taps, one inside the input. The worker does not skip the run as too long: the
    run entry halts before the first tap, at once; current visits the one tap."""
    case = make((1, 1, 1, 1), (2**20,) * 2, padding=(2**19,) * 2)
    with NativeJudge("legacy", op=case.OP) as judge:
        (halted,) = judge.run([case])
    assert (halted.verdict, halted.crash_kind) == ("crash", "work past limit"), halted
    assert halted.crash_site.startswith("halt_if_idle_past_limit pool_loops.c:"), halted
    with NativeJudge("current", op=case.OP) as judge:
        (ran,) = judge.run([case])
    assert ran.verdict == "accept", ran
    assert ran.values == pooled(case, ran.out_sizes)


@pytest.mark.parametrize(
    ("kernel", "divisor", "site", "wrapped"),
    [
        ((1, 1), -1, "avg_divide", (float(INT64_MIN),) * 4),  # INT64_MIN / -1
        ((2, 2), None, "plus", (0.0,)),  # 4 * INT64_MIN wraps to 0, then / 4
    ],
)
def test_legacys_run_overflows_on_int64_min_and_currents_wraps(kernel, divisor, site, wrapped):
    """avg_pool2d on int64 data holding INT64_MIN (``int64_fill``): legacy divides one
    by an override of -1, or sums two; current wraps both."""
    case = avg((1, 1, 2, 2), kernel, divisor=divisor, dtype="int64", fill=INT64_MIN)
    with NativeJudge("legacy", op=case.OP) as judge:
        (crashed,) = judge.run([case])
    assert (crashed.verdict, crashed.crash_kind) == ("crash", "signed-integer-overflow"), crashed
    assert crashed.crash_site.startswith(f"{site} pool_loops.c:"), crashed
    with NativeJudge("current", op=case.OP) as judge:
        (ran,) = judge.run([case])
    assert (ran.verdict, ran.values) == ("accept", wrapped), ran


def test_the_model_walks_the_windows_of_every_call_a_run_computes():
    """legacy's ``window_sums`` leaves larger calls unwalked: the run entry is never
    called on them, with the default limits."""
    assert WALKED_OUT_ELEMENTS == RunLimits().max_out_elements


def test_the_padded_area_overflows_before_the_halt():
    """Issue 29's kernel 2^32, padding 2^31 with count_include_pad: the first window's
    area overflows (kernel_ops_util.h:200) before its taps are counted."""
    case = avg((1, 1, 1, 1), (2**32,) * 2, padding=(2**31,) * 2)
    with NativeJudge("legacy", op=case.OP) as judge:
        (crashed,) = judge.run([case])
    assert (crashed.verdict, crashed.crash_kind) == ("crash", "signed-integer-overflow"), crashed


# Every class of undefined behaviour (or spinning loops) of legacy, as the smallest call a
# person writes that shows it; the sanitized kernel, judged beside the model, must crash
# on it and the finding must name that class. (The solver witnesses the arithmetic ones
# too, test_pool_prove.py, with calls far from minimal.)
HAND_WITNESSES = {
    "avg_pool2d": {
        "stride 0 divides by zero": avg((1, 1, 1), (1,), stride=(0,)),
        "unchecked stride overflows the output size": avg(
            (1, 1, 1), (1,), stride=(INT64_MIN,), ceil_mode=True
        ),
        "strides past int32": avg((0, 1, 2, 2**30), (1,)),
        "padded window's area overflows": avg((1, 1, 1, 1), (2**33,), (1,), padding=(2**32,)),
        "the loops visit every tap (work past limit)": avg((1, 1, 1, 1), (2**16 + 1,)),
        "INT64_MIN / -1 with divisor_override": avg(
            (1, 1, 1), (1,), divisor=-1, dtype="int64", fill=INT64_MIN
        ),
        "int64 window sum overflows": avg((1, 1, 2), (1, 2), dtype="int64", fill=INT64_MIN),
    },
    "max_pool2d_with_indices": {
        "stride 0 divides by zero": max_pool((1, 1, 1), (1,), stride=(0,)),
        "unchecked stride overflows the output size": max_pool(
            (1, 1, 1), (1,), stride=(INT64_MIN,), ceil_mode=True
        ),
        "unchecked dilation overflows the output size": max_pool(
            (1, 1, 3, 3), (3,), dilation=(2**62,)
        ),
        "strides past int32": max_pool((0, 1, 2, 2**30), (1,)),
        "the loops visit every tap (work past limit)": max_pool((1, 1, 1, 1), (2**16 + 1,)),
    },
}


@pytest.mark.parametrize("op", OPS)
def test_each_legacy_crash_class_has_a_hand_minimal_witness(op):
    crashing = {
        name
        for name, signatures in importlib.import_module(
            f"convcheck.ops.{op}.known_bugs"
        ).LEGACY_BUG_CLASSES.items()
        if any(signature[0] == "crash" for signature in signatures)
    }
    assert set(HAND_WITNESSES[op]) == crashing
    witnesses = list(HAND_WITNESSES[op].items())
    with Judges("legacy", op=op, use_torch=False) as judges:
        judgements = judges.judge([case for _, case in witnesses])
        for (name, _), judgement in zip(witnesses, judgements, strict=True):
            found = [f for f in judges.findings(judgement) if f.kind == "crash"]
            assert [registry.get(op).bug_class(f.signature) for f in found] == [name], found
