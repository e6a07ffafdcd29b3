"""The intentional differences: all of current's explained, none of the thread's bugs.

The kernel here is the model of each revision (``convcheck.model``), which the native
kernel's fidelity tests hold to the C; torch is the torch judge.
"""

from __future__ import annotations

import collections

import pytest

pytest.importorskip("torch", reason="the torch judge needs PyTorch")

from torch_cases import large_cases  # noqa: E402

from convcheck import model  # noqa: E402
from convcheck.case import TensorSpec, channels_last_order  # noqa: E402
from convcheck.ops.convolution.case import ConvolutionCase
from convcheck.ops.convolution.differences import DIFFERENCES, Difference, explain_difference  # noqa: E402
from convcheck.outcome import ACCEPT, REJECT  # noqa: E402


def kernel_outcome(case, revision):
    return model.predict(model.run(case, revision), with_loops=False)


def disagree(kernel, torch):
    if kernel.verdict not in (ACCEPT, REJECT) or torch.verdict not in (ACCEPT, REJECT):
        return False
    if kernel.verdict != torch.verdict:
        return True
    return kernel.verdict == ACCEPT and kernel.out_sizes != torch.out_sizes


def unexplained(cases, verdicts, revision):
    found = collections.Counter()
    examples = {}
    for case, verdict in zip(cases, verdicts, strict=True):
        kernel = kernel_outcome(case, revision)
        if not disagree(kernel, verdict.outcome):
            continue
        if explain_difference(case, revision, kernel, verdict.outcome, verdict) is None:
            key = (kernel.describe(), verdict.outcome.describe())
            found[key] += 1
            examples.setdefault(key, case.dumps())
    return found, examples


def test_the_table():
    names = [e.difference.name for e in DIFFERENCES]
    assert len(set(names)) == len(names)
    assert all(e.difference.reason for e in DIFFERENCES)
    assert {
        "out-tensor",
        "dim-order-support",
        "bool-no-kernel",
        "params-32bit",
        "size-type-32bit",
        "stride-type-32bit",
        "empty-batch-or-channel",
        "torch-missing-kernel",
        "bias-dtype",
    } <= set(names)


def test_on_current_every_difference_from_torch_is_explained(generated, judge):
    cases, verdicts = generated
    large = large_cases(11, 1500)
    cases, verdicts = list(cases) + large, list(verdicts) + judge.judge(large, values=False)
    found, examples = unexplained(cases, verdicts, "current")
    report = "\n".join(f"{n} x {k}: {examples[k]}" for k, n in found.most_common(10))
    assert not found, f"unexplained differences on current:\n{report}"


def test_without_the_verdict_the_check_path_stands_in(generated):
    """The engine may pass only torch's outcome: the oneDNN entry then asks the checks."""
    cases, verdicts = generated
    for case, verdict in zip(cases, verdicts, strict=True):
        kernel = kernel_outcome(case, "current")
        if verdict.path == "real" and disagree(kernel, verdict.outcome):
            with_verdict = explain_difference(case, "current", kernel, verdict.outcome, verdict)
            alone = explain_difference(case, "current", kernel, verdict.outcome)
            if with_verdict is not None and with_verdict.name != "onednn-only":
                assert alone == with_verdict


def t(*sizes, dtype="float32", order=None):
    return TensorSpec(tuple(sizes), dtype, None if order is None else tuple(order))


def conv(i, w, b=None, out=None, tr=False, **kw):
    args = dict(stride=(1,), padding=(0,), dilation=(1,), output_padding=(0,), groups=1)
    args.update(kw)
    return ConvolutionCase(i, w, b, out or t(*i.sizes, dtype=i.dtype), transposed=tr, **args)


I5, W5 = t(1, 2, 4, 4, 4), t(4, 2, 3, 3, 3)

# Each: a case on which the kernel (current) and torch disagree, and the entry that says why.
CURRENT = [
    ("out-tensor", conv(t(1, 2, 5), t(4, 2, 3), out=t(1, 4, 3, dtype="float64"))),
    ("out-tensor", conv(t(1, 2, 5), t(4, 2, 3), out=t(1, 4))),
    ("dim-order-support", conv(t(1, 2, 5, order=(0, 2, 1)), t(4, 2, 3))),
    ("dim-order-support", conv(t(1, 2, 5, 5, order=(0, 3, 1, 2)), t(4, 2, 3, 3))),
    ("params-32bit", conv(t(1, 1, 5), t(1, 1, 3), dilation=(2**62,))),
    ("params-32bit", conv(t(0, 1, 5), t(1, 1, 3), padding=(2**61,))),
    ("size-type-32bit", conv(t(0, 1, 2**31 - 1), t(1, 1, 2), padding=(5,))),
    ("stride-type-32bit", conv(t(0, 0, 3, 2**31 - 7), t(2, 0, 2, 3), out=t(0, 0, 2, 2**31 - 9))),
    ("empty-batch-or-channel", conv(t(0, 2, 5), t(4, 2, 3), dilation=(0,))),
    ("empty-batch-or-channel", conv(t(0, 2, 5), t(4, 2, 3, dtype="float64"))),
    ("empty-batch-or-channel", conv(t(0, 2, 5), t(4, 2, 3), t(4, dtype="bool"))),
    ("bias-dtype", conv(t(1, 2, 5), t(4, 2, 3), t(4, dtype="bool"))),
    ("bias-dtype", conv(t(2, 2, 5, 5), t(4, 2, 3, 3), t(4, dtype="float64"))),
    ("torch-missing-kernel", conv(t(1, 4, 5, dtype="int32"), t(4, 2, 3, dtype="int32"), tr=True)),
    ("rank-above-5", conv(t(0, 2, 3, 3, 3, 3), t(4, 2, 2, 2, 2, 2))),
    ("output-padding-unused", conv(t(1, 2, 5), t(4, 2, 3), output_padding=(-1,))),
    ("no-output-channel", conv(t(1, 4, 5), t(4, 0, 3), tr=True)),
]


@pytest.mark.parametrize("name,case", CURRENT, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CURRENT)])
def test_current_entries(name, case, judge):
    (verdict,) = judge.judge([case], values=False)
    kernel = kernel_outcome(case, "current")
    assert disagree(kernel, verdict.outcome), (kernel.describe(), verdict.describe())
    found = explain_difference(case, "current", kernel, verdict.outcome, verdict)
    assert isinstance(found, Difference) and found.name == name, (found, verdict.describe())
    assert found.describe().startswith(f"intentional difference {name}:")


# The bugs the thread of PR 24385 names, on legacy: torch disagrees, nothing explains it.
LEGACY_BUGS = [
    ("5-D input rejected", conv(I5, W5)),
    ("5-D channels-last input rejected", conv(t(1, 2, 4, 4, 4, order=channels_last_order(5)), W5)),
    ("bias of the wrong length read past its end", conv(t(1, 2, 5), t(4, 2, 3), t(2))),
    ("transposed bias of the wrong length", conv(t(1, 4, 5), t(4, 2, 3), t(1), tr=True)),
    ("kernel larger than the padded input, stride 2", conv(t(1, 1, 2), t(1, 1, 3), stride=(2,))),
    ("kernel larger than the padded input, 2-D", conv(t(1, 4, 2, 2), t(4, 4, 3, 3), stride=(2,))),
    ("kernel dim of 0", conv(t(1, 2, 5), t(4, 2, 0))),
    ("kernel dim of 0, empty batch", conv(t(0, 2, 5), t(4, 2, 0))),
    ("empty spatial dim", conv(t(1, 2, 0), t(4, 2, 3), padding=(2,))),
    ("huge padding cut to 32 bits", conv(t(1, 2, 5), t(4, 2, 3), padding=(2**40,))),
    # One out channel: with four, out's int32 strides would overflow first (a crash).
    ("output size narrowed to 32 bits", conv(t(1, 2, 2**31 - 1), t(1, 2, 3), padding=(2**31,))),
]


@pytest.mark.parametrize("what,case", LEGACY_BUGS, ids=[w for w, _ in LEGACY_BUGS])
def test_legacy_bugs_are_not_explained(what, case, judge):
    (verdict,) = judge.judge([case], values=False)
    kernel = kernel_outcome(case, "legacy")
    assert disagree(kernel, verdict.outcome), (kernel.describe(), verdict.describe())
    assert explain_difference(case, "legacy", kernel, verdict.outcome, verdict) is None


def test_current_fixes_what_legacy_gets_wrong(judge):
    """The same calls on current: torch and the kernel agree, or an entry explains why not."""
    cases = [case for _what, case in LEGACY_BUGS]
    for case, verdict in zip(cases, judge.judge(cases, values=False), strict=True):
        kernel = kernel_outcome(case, "current")
        if disagree(kernel, verdict.outcome):
            assert explain_difference(case, "current", kernel, verdict.outcome, verdict)
