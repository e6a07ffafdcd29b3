"""The check path (any size) against real CPU, and the normaliser, on generated cases.

The check path's verdict, check id and output sizes must equal real CPU's on every small
case where both run, with oneDNN on and off; both of its implementations (torch's
private ``_select_conv_backend`` and the Python fallback) are held to it. Every message
real CPU produced must map to a known id.
"""

from __future__ import annotations

import collections

import pytest

pytest.importorskip("torch", reason="the torch judge needs PyTorch")

from conftest import GENERATED_COUNT, THREADS  # noqa: E402
from torch_cases import large_cases, verdict_key  # noqa: E402

from convcheck.ops.convolution.torch_oracle import _torch  # noqa: E402
from convcheck.ops.convolution.torch_oracle._checks import check_path  # noqa: E402
from convcheck.ops.convolution.torch_oracle._normalize import is_unknown  # noqa: E402
from convcheck.outcome import ACCEPT, CRASH, HANG  # noqa: E402


def _key(outcome):
    if outcome.verdict == ACCEPT:
        return (ACCEPT, outcome.out_sizes)
    return (outcome.verdict, outcome.check or outcome.crash_kind)


def _disagreements(cases, verdicts, private):
    compared = collections.Counter()  # by oneDNN on/off
    agreed = collections.Counter()
    bad = collections.Counter()
    examples = {}
    for case, verdict in zip(cases, verdicts, strict=True):
        if verdict.path != "real":
            continue
        for real, onednn in ((verdict.outcome, True), (verdict.no_onednn, False)):
            if real.verdict in (CRASH, HANG) or real.check == "torch.alloc":
                continue  # torch's own failure, or out of memory: nothing to predict
            checked = check_path(case, threads=THREADS, onednn=onednn, private=private)
            compared[onednn] += 1
            if _key(real) == _key(checked.outcome):
                agreed[onednn] += 1
            else:
                key = (onednn, checked.backend, _key(real), _key(checked.outcome))
                bad[key] += 1
                examples.setdefault(key, case.dumps())
    return compared, agreed, bad, examples


@pytest.mark.parametrize("private", [True, False], ids=["select_conv_backend", "fallback"])
def test_check_path_equals_real_cpu(generated, private):
    if private and not _torch.has_select_conv_backend():
        pytest.skip("this torch has no torch._C._select_conv_backend")
    cases, verdicts = generated
    compared, agreed, bad, examples = _disagreements(cases, verdicts, private)
    print(
        f"check path ({'private API' if private else 'fallback'}) vs real CPU: "
        f"oneDNN on {agreed[True]}/{compared[True]} agree, "
        f"oneDNN off {agreed[False]}/{compared[False]} agree"
    )
    report = "\n".join(f"{n} x {k}: {examples[k]}" for k, n in bad.most_common(10))
    assert not bad, f"check path disagrees with real CPU:\n{report}"
    # every generated case is small and compared, but for torch's own crashes
    assert compared[True] >= GENERATED_COUNT * 0.99 and compared[False] >= GENERATED_COUNT * 0.99


def test_generated_cases_cover_the_backends_and_checks(generated):
    cases, verdicts = generated
    backends = collections.Counter(v.backend for v in verdicts)
    for backend in (
        "Empty",
        "Mkldnn",
        "MkldnnTranspose",
        "Slow2d",
        "SlowDilated2d",
        "Slow3d",
        "SlowTranspose2d",
        "SlowTranspose3d",
        "",
    ):
        assert backends[backend] >= 5, backends
    checks = collections.Counter(v.outcome.check for v in verdicts if v.outcome.verdict == "reject")
    for check in (
        "groups.nonpos",
        "groups.gt_weight0",
        "groups.not_div_weight0",
        "input.channels",
        "bias.length",
        "bias.rank",
        "kernel.nonpos",
        "kernel.gt_padded_input",
        "input.empty_spatial",
        "stride.range",
        "padding.range",
        "dilation.range",
        "output_padding.range",
        "stride.length",
        "padding.length",
        "dilation.length",
        "output_padding.length",
        "rank.weight",
        "dtype.mismatch",
        "dtype.unsupported",
        "output.invalid",
        "output_padding.too_large",
        "torch.bias_dtype",
        "torch.not_implemented",
    ):
        assert checks[check] >= 3, (check, checks)
    accepted = sum(v.outcome.verdict == "accept" for v in verdicts)
    assert accepted >= 200


def test_every_message_maps_to_a_known_id(generated):
    _cases, verdicts = generated
    unknown = collections.Counter()
    for v in verdicts:
        for outcome in (v.outcome, v.no_onednn):
            if outcome.verdict == "reject" and is_unknown(outcome.check):
                unknown[(outcome.check, outcome.detail.splitlines()[0][:120])] += 1
    for (check, message), n in unknown.most_common():
        print(f"unknown: {n} x {check}: {message}")
    assert not unknown


def test_check_path_equals_real_cpu_on_the_projects_generator(judge):
    """convcheck.generate's small cases: parameters at the int32 and int64 edges."""
    from convcheck.generate import random_cases as project_cases

    cases = project_cases(3, 2000, small=True)
    verdicts = judge.judge(cases, values=False)
    compared, agreed, bad, examples = _disagreements(cases, verdicts, private=None)
    print(
        f"project generator: oneDNN on {agreed[True]}/{compared[True]}, "
        f"off {agreed[False]}/{compared[False]} agree"
    )
    report = "\n".join(f"{n} x {k}: {examples[k]}" for k, n in bad.most_common(10))
    assert not bad, f"check path disagrees with real CPU:\n{report}"
    assert compared[True] >= 1900


def test_private_api_and_fallback_agree_on_large_cases():
    """Sizes up to 2^31 - 1 and parameters at the int32/int64 edges: nothing runs."""
    if not _torch.has_select_conv_backend():
        pytest.skip("this torch has no torch._C._select_conv_backend")
    bad = []
    cases = large_cases(7, 4000)
    for case in cases:
        for onednn in (True, False):
            a = check_path(case, threads=THREADS, onednn=onednn, private=True)
            b = check_path(case, threads=THREADS, onednn=onednn, private=False)
            if (_key(a.outcome), a.backend) != (_key(b.outcome), b.backend):
                bad.append((case.dumps(), a.outcome.describe(), b.outcome.describe()))
    assert not bad, bad[:5]


def test_thread_count_changes_the_backend_and_is_recorded():
    """1x1 float32 kernels, batch 1: the slow kernel on one thread, oneDNN on two."""
    from convcheck.case import TensorSpec
    from convcheck.ops.convolution.case import ConvolutionCase

    case = ConvolutionCase(
        TensorSpec((1, 4, 8, 8)),
        TensorSpec((4, 2, 1, 1)),
        None,
        TensorSpec((1, 4, 8, 8)),
        (1,),
        (0,),
        (1,),
        False,
        (0,),
        2,
    )
    assert check_path(case, threads=1).backend == "Slow2d"
    assert check_path(case, threads=2).backend == "Mkldnn"
    assert check_path(case, threads=2, onednn=False).backend == "Slow2d"


def _with_and_without(judge, shortcut, cases):
    """The verdicts on ``cases`` with the judge's ``shortcut`` on, then off."""
    taken = judge.judge(cases, values=True)
    setattr(judge, shortcut, False)
    try:
        return taken, judge.judge(cases, values=True)
    finally:
        setattr(judge, shortcut, True)


def test_reusing_the_onednn_answer_equals_running_without_onednn(judge):
    """Where oneDNN on picks no oneDNN backend, the judge reuses that answer for oneDNN
    off (check path and real CPU): the same verdicts, sizes and values as running both."""
    from convcheck.generate import random_cases as project_cases
    from convcheck.ops.convolution.torch_oracle import ONEDNN_BACKENDS

    cases = project_cases(5, 600, small=True)
    reused, both = _with_and_without(judge, "reuse_without_onednn", cases)
    shortcut = [v for v in reused if v.backend not in ONEDNN_BACKENDS]
    assert sum(v.path == "real" for v in shortcut) >= 50, "too few real runs compared"
    for case, a, b in zip(cases, reused, both, strict=True):
        assert verdict_key(a) == verdict_key(b), case.dumps()


def _same_answer(a, b, dtype):
    """Two real answers to one call, run with different thread counts: the same verdict,
    check, sizes and crash, and values equal within the dtype's tolerance (the threads
    split the sums differently)."""
    from convcheck.ops.convolution.torch_oracle._compare import first_difference

    if (a.verdict, a.check, a.out_sizes, a.crash_kind) != (
        b.verdict,
        b.check,
        b.out_sizes,
        b.crash_kind,
    ):
        return False
    if (a.values is None) != (b.values is None):
        return False
    return a.values is None or first_difference(a.values, b.values, dtype or "float32") is None


def test_one_thread_where_the_backend_does_not_depend_on_it_equals_the_configured_threads(
    judge,
):
    """Where ATen picks the same backends with one thread as with the configured two, the
    judge runs the real calls with one: the same verdicts, checks, sizes, torch bugs and
    (within tolerance) values as running them with two, on small generated cases."""
    from convcheck.generate import random_cases as project_cases

    cases = project_cases(6, 600, small=True)
    shortcut, configured = _with_and_without(judge, "single_thread", cases)
    real = [v for v in shortcut if v.path == "real"]
    assert sum(v.ran_threads == 1 for v in real) >= 100, "too few one-thread runs compared"
    assert any(v.ran_threads == THREADS for v in real), "no call where the threads matter"
    assert {v.ran_threads for v in configured if v.path == "real"} == {THREADS}
    for case, a, b in zip(cases, shortcut, configured, strict=True):
        assert (a.backend, a.path, a.out_dtype) == (b.backend, b.path, b.out_dtype)
        assert _same_answer(a.outcome, b.outcome, a.out_dtype), (case.dumps(), a, b)
        assert _same_answer(a.no_onednn, b.no_onednn, a.out_dtype), (case.dumps(), a, b)
        assert (a.torch_bug is None) == (b.torch_bug is None), (case.dumps(), a, b)
        if a.torch_bug:
            assert a.torch_bug.split(":")[0] == b.torch_bug.split(":")[0]
