"""The findings table on synthetic outcomes: no worker, no torch, every kind.

Each row is a hand-built judgement (what the model predicted, what the kernel and torch
answered) and the signatures ``findings`` must turn it into.
"""

from types import SimpleNamespace

import pytest
from builders import conv

from convcheck.findings import Finding, FindingKind, findings, values_differ
from convcheck.judgement import Judgement
from convcheck.model import ModelFinding, ModelRun
from convcheck.outcome import Outcome

CASE = conv()
ACCEPT = Outcome.accept((1, 4, 3))


def judgement(
    predicted=ACCEPT,
    native=None,
    native_run=None,
    torch=None,
    torch_bug=None,
    model_findings=(),
):
    """``predicted`` stands for the model's sanitized prediction (``expected``)."""
    run = ModelRun("legacy", False, ACCEPT, (), (), ())
    verdict = None
    if torch is not None:
        verdict = SimpleNamespace(outcome=torch, torch_bug=torch_bug, no_onednn=None)
    return Judgement(
        CASE, "legacy", run, run, list(model_findings), native, native_run, verdict, predicted
    )


ROWS = [
    ("all agree", judgement(native=ACCEPT, torch=ACCEPT), []),
    (
        "model findings, sites folded across dims",
        judgement(
            model_findings=[
                ModelFinding("overflow", "output_sizes.dim1.narrow", "C gives ..."),
                ModelFinding("ordering", "bias_shape.groups_mul", "UB before ..."),
            ]
        ),
        [("overflow", "output_sizes.dim*.narrow"), ("ordering", "bias_shape.groups_mul")],
    ),
    (
        "a foreseen crash is named by the model's step",
        judgement(
            predicted=Outcome.crashed("division-by-zero", "groups.weight0_rem"),
            native=Outcome.crashed("division-by-zero", "cc_check_groups checks_legacy.c:40"),
        ),
        [("crash", "division-by-zero", "groups.weight0_rem")],
    ),
    (
        "an unforeseen crash is named by the C function: the crash is the infidelity",
        judgement(native=Outcome.crashed("SEGV", "cc_output_dim1 checks_legacy.c:7")),
        [("crash", "SEGV", "cc_output_dim*")],
    ),
    (
        "per-dtype loaders are one function",
        judgement(
            native=ACCEPT,
            native_run=Outcome.crashed("heap-buffer-overflow READ", "load_bfloat16 loops.c:9"),
        ),
        [("crash", "heap-buffer-overflow READ", "load")],
    ),
    (
        "a C++ site: template arguments, return type and parameters folded",
        judgement(
            native=Outcome.crashed(
                "signed-integer-overflow",
                "void et::native::(anonymous namespace)::conv2d<float, double>"
                "(et::Tensor const&, long) const op_convolution.cpp:41",
            )
        ),
        [("crash", "signed-integer-overflow", "et::native::{anonymous}::conv2d")],
    ),
    (
        "the loops crash on a call the model rejects: the check the kernel passed is the bug",
        judgement(
            predicted=Outcome.reject("rank.weight"),
            native=ACCEPT,
            native_run=Outcome.crashed("SEGV", "load_float32 conv_loops.c:160"),
        ),
        [("infidelity", "rank.weight", "kernel passes")],
    ),
    (
        "the checks crash in a step after the model's rejection: the same",
        judgement(
            predicted=Outcome.reject("stride.range"),
            native=Outcome.crashed("signed-integer-overflow", "step_output_sizes checks.c:180"),
        ),
        [("infidelity", "stride.range", "kernel passes")],
    ),
    (
        "the checks crash in the step of the model's rejection: that check is not applied",
        judgement(
            predicted=Outcome.reject("groups.not_div_weight0"),
            native=Outcome.crashed("division-by-zero", "step_groups checks_legacy.c:87"),
        ),
        [("infidelity", "groups.not_div_weight0", "kernel passes")],
    ),
    (
        "the checks crash before the model's rejection: a crash of its own",
        judgement(
            predicted=Outcome.reject("out.resize"),
            native=Outcome.crashed("signed-integer-overflow", "step_output_sizes checks.c:180"),
        ),
        [("crash", "signed-integer-overflow", "step_output_sizes")],
    ),
    (
        "a hang",
        judgement(native=Outcome.hung()),
        [("crash", "hang", "?")],
    ),
    (
        "the kernel passes the check at which the model rejects",
        judgement(
            predicted=Outcome.reject("groups.gt_weight0"),
            native=Outcome.reject("input.channels"),
            torch=Outcome.reject("groups.gt_weight0"),
        ),
        [("infidelity", "groups.gt_weight0", "kernel passes")],
    ),
    (
        "the kernel passes it and accepts: the same finding, torch not compared",
        judgement(
            predicted=Outcome.reject("groups.gt_weight0"),
            native=ACCEPT,
            torch=Outcome.reject("groups.gt_weight0"),
        ),
        [("infidelity", "groups.gt_weight0", "kernel passes")],
    ),
    (
        "the kernel rejects at a check the model passed, within one step",
        judgement(
            predicted=Outcome.reject("groups.not_div_weight0"),
            native=Outcome.reject("groups.gt_weight0"),
        ),
        [("infidelity", "groups.gt_weight0", "kernel rejects")],
    ),
    (
        "the run entry rejects a call the model accepts",
        judgement(native=ACCEPT, native_run=Outcome.reject("bias.length")),
        [("infidelity", "bias.length", "kernel rejects")],
    ),
    (
        "the kernel survives a site the model says has undefined behaviour",
        judgement(
            predicted=Outcome.crashed("division-by-zero", "groups.weight0_rem"),
            native=Outcome.reject("input.channels"),
        ),
        [("infidelity", "groups.weight0_rem", "kernel passes")],
    ),
    (
        "a check id of the kernel's own names no point of ours",
        judgement(predicted=Outcome.reject("rank.input"), native=Outcome.reject("E_RANK")),
        [("infidelity", "rank.input", "kernel rejects another id")],
    ),
    (
        "both accept with other sizes",
        judgement(native=Outcome.accept((1, 4, 4)), torch=Outcome.accept((1, 4, 4))),
        [("infidelity", "output_sizes", "sizes differ")],
    ),
    (
        "missing check",
        judgement(native=ACCEPT, torch=Outcome.reject("torch.padding_too_large")),
        [("missing-check", "torch.padding_too_large")],
    ),
    (
        "over-strict",
        judgement(
            predicted=Outcome.reject("rank.input"),
            native=Outcome.reject("rank.input"),
            torch=ACCEPT,
        ),
        [("over-strict", "rank.input")],
    ),
    (
        "wrong sizes",
        judgement(native=ACCEPT, torch=Outcome.accept((1, 4, 4))),
        [("wrong-result", "sizes")],
    ),
    (
        "wrong values",
        judgement(
            native=ACCEPT,
            native_run=Outcome.accept((1, 4, 3), values=(1.0, 2.0)),
            torch=Outcome.accept((1, 4, 3), values=(1.0, 3.0)),
        ),
        [("wrong-result", "values")],
    ),
    (
        "values within float32 tolerance",
        judgement(
            native=ACCEPT,
            native_run=Outcome.accept((1, 4, 3), values=(1.0, 2.0)),
            torch=Outcome.accept((1, 4, 3), values=(1.0, 2.0 + 1e-6)),
        ),
        [],
    ),
    (
        "torch crashed",
        judgement(native=ACCEPT, torch=Outcome.crashed("SIGSEGV", "aten.convolution")),
        [("torch-bug", "crash SIGSEGV")],
    ),
    (
        "torch disagrees with itself: numbers folded",
        judgement(
            native=ACCEPT,
            torch=ACCEPT,
            torch_bug="sizes: oneDNN [1, 4, 3], no oneDNN [1, 4, 2]; details 17",
        ),
        [("torch-bug", "sizes: oneDNN [...], no oneDNN [...]")],
    ),
    (
        "a result outside the ABI is named by its field, and nothing else is compared",
        judgement(native=Outcome.abi_violation("out_rank", "out_rank is 99"), torch=ACCEPT),
        [("abi-violation", "out_rank")],
    ),
    (
        "convcheck's own failure on the run entry, and nothing else is compared",
        judgement(
            native=ACCEPT,
            native_run=Outcome.tool_error("ValueError: array is too big"),
            torch=Outcome.reject("torch.padding_too_large"),
        ),
        [("tool-error", "native_run")],
    ),
]


@pytest.mark.parametrize("name, j, signatures", ROWS, ids=[row[0] for row in ROWS])
def test_the_findings_table(name, j, signatures):
    assert [f.signature for f in findings(j)] == signatures


def test_the_table_covers_every_kind():
    kinds = {f.kind for _, j, _ in ROWS for f in findings(j)}
    assert kinds == set(FindingKind)


def test_an_intentional_difference_silences_kernel_against_torch_only():
    torch = Outcome.reject("torch.padding_too_large")
    seen = []

    def explain(case, revision, kernel, torch_outcome, verdict):
        seen.append((case, revision, kernel, torch_outcome))
        return "padding is bounded on purpose"

    j = judgement(
        native=ACCEPT,
        torch=torch,
        model_findings=[ModelFinding("overflow", "output_sizes.dim0.narrow", "")],
    )
    assert [f.signature for f in findings(j, explain)] == [("overflow", "output_sizes.dim*.narrow")]
    assert seen == [(CASE, "legacy", ACCEPT, torch)]
    # Without the hook, the same judgement is a missing check.
    assert ("missing-check", "torch.padding_too_large") in [f.signature for f in findings(j)]


def test_the_hook_is_not_asked_when_a_judge_crashed():
    def explain(*args):
        raise AssertionError("asked")

    j = judgement(native=Outcome.hung(), torch=ACCEPT)
    assert {f.kind for f in findings(j, explain)} == {"crash"}


def test_the_why_line_of_a_cpp_crash_is_short():
    site = "void ns::f<" + ", ".join(["std::vector<int>"] * 40) + ">(int) a.cpp:3"
    (found,) = findings(judgement(native=Outcome.crashed("SEGV", site)))
    assert found.signature == ("crash", "SEGV", "ns::f")
    assert len(found.explanation) < 120, found.explanation


def test_kinds_are_the_corpus_strings_and_say_what_they_mean():
    assert [k.value for k in FindingKind] == [
        "crash",
        "infidelity",
        "missing-check",
        "over-strict",
        "wrong-result",
        "overflow",
        "ordering",
        "torch-bug",
        "abi-violation",
        "tool-error",
    ]
    assert all(k.description for k in FindingKind)
    assert [k for k in FindingKind if not k.about_kernel] == [
        FindingKind.TORCH_BUG,
        FindingKind.TOOL_ERROR,
    ]
    finding = Finding("torch-bug", ("torch-bug", "x"), CASE, {})
    assert finding.kind is FindingKind.TORCH_BUG and not finding.about_kernel
    with pytest.raises(ValueError):
        Finding("nonsense", ("nonsense",), CASE, {})


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int32", "bool"])
def test_equal_values_never_differ_and_a_nan_differs_from_itself_in_exact_dtypes(dtype):
    nan, inf = float("nan"), float("inf")
    assert values_differ(dtype, (1.0, 2.5, -inf), (1.0, 2.5, -inf)) is None
    assert values_differ(dtype, (0.0, 3), (-0.0, 3.0)) is None
    with_nan = (1.0, nan)
    # A tolerant comparison takes NaN for NaN; an exact one (numpy's !=) does not.
    differs = values_differ(dtype, with_nan, with_nan)
    if dtype in ("float32", "bfloat16"):
        assert differs is None
    else:
        assert differs.startswith("value 1:")
    assert values_differ(dtype, (1.0, 2.0), (1.0, 2.5)).startswith("value 1:")
