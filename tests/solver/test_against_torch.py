"""``prove --against torch``: torch's checks before the backend, run symbolically beside the
model, held to the same checks run concretely and to real torch."""

import io
import json

import pytest

pytest.importorskip("z3")

import z3  # noqa: E402
from builders import conv, t  # noqa: E402

from convcheck import cli, model  # noqa: E402
from convcheck.fixedint import INT32_MAX, INT64_MAX, INT64_MIN, Wrapping  # noqa: E402
from convcheck.ops.convolution import against_torch  # noqa: E402
from convcheck.ops.convolution.solving import ConvolutionShape as Shape  # noqa: E402
from convcheck.solver import limits  # noqa: E402
from convcheck.solver.explore import Inputs  # noqa: E402
from convcheck.solver.revisions import paired_paths  # noqa: E402
from convcheck.solver.symbolic import Path, SymInt  # noqa: E402

EDGES = (0, 1, -1, 2, -2, 7, -7, INT32_MAX, INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1)


def _path() -> Path:
    solver = z3.Solver()
    solver.check()
    return Path([], (), solver.model(), limits.CHEAP)


@pytest.mark.parametrize("op", ["add_i64", "sub_i64", "mul_i64", "rem_i64"])
def test_the_symbolic_wrapping_arithmetic_is_the_concrete_one(op):
    """Every pair of edge values: the term's value is ``Wrapping``'s (C's, wraps included;
    ``%`` truncating as C does, not flooring as Python does)."""
    path = _path()
    symbolic, concrete = against_torch.WrappingSymbolic(path), Wrapping()
    for a in EDGES:
        for b in EDGES:
            if op == "rem_i64" and (b == 0 or (a, b) == (INT64_MIN, -1)):
                continue  # undefined in C: torch divides only by values it checked positive
            got = getattr(symbolic, op)(SymInt(z3.IntVal(a), path), b, "test")
            value = z3.simplify(got.term).as_long()
            assert value == getattr(concrete, op)(a, b, "test"), (op, a, b)


def _pinned(shape: Shape, case) -> Inputs:
    """The shape's variables, pinned to one concrete call's values."""
    inputs = against_torch.torch_inputs(shape)
    concrete = {
        **{
            f"{name}.sizes[{i}]": v
            for name in ("input", "weight")
            for i, v in enumerate(getattr(case, name).sizes)
        },
        **{
            f"{name}[{i}]": v
            for name in ("stride", "padding", "dilation", "output_padding")
            for i, v in enumerate(getattr(case, name))
        },
        "groups": case.groups,
    }
    inputs.domain += [t == concrete[str(t)] for t in inputs.terms()]
    return inputs


def _torch_paths(inputs):
    return [
        (path, passes)
        for path, _, passes in paired_paths(
            inputs, lambda case, path: True, against_torch._torch_side, limits.CHEAP
        )
    ]


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({}, against_torch.PASSED),
        ({"dilation": (2**62,)}, against_torch.PASSED),  # ATen's kernel extent wraps
        ({"groups": -2}, "groups.nonpos"),
        ({"padding": (-1,)}, "padding.range"),
        ({"output_padding": (-(2**62) - 1,)}, "output_padding.range"),  # not a SymInt
        ({"groups": 4}, "groups.not_div_weight0"),  # C's %: 6 % 4
        ({"dilation": (3,)}, "kernel.gt_padded_input"),
        ({"padding": (2**62,)}, "torch.padding_too_large"),
    ],
    ids=repr,
)
def test_the_symbolic_torch_steps_take_the_concrete_steps(changes, expected):
    """Pinned to one call, the symbolic run has one path, and it passes exactly when the
    same steps pass on the concrete call (they are the same code: ``aten_call`` and
    ``_fallback.shape_checks``)."""
    case = conv(**{"input": t(1, 6, 5), "weight": t(6, 3, 3), "bias": None, "groups": 2, **changes})
    paths = _torch_paths(_pinned(Shape(3, False, None), case))
    assert len(paths) == 1
    assert against_torch.torch_check(case) == expected
    assert paths[0][1] == (expected == against_torch.PASSED)


def test_every_symbolic_torch_path_is_its_inputs_concrete_path():
    """Unpinned (small values, so that it is fast): each path's own input gives the
    symbolic path's answer when the same steps run concretely."""
    inputs = against_torch.torch_inputs(Shape(3, True, "float32"))
    inputs.domain += [v <= 3 for v in inputs.terms()] + [v >= -3 for v in inputs.terms()]
    paths = _torch_paths(inputs)
    assert len(paths) > 10
    for path, passes in paths:
        case = inputs.concrete_case(path.model)
        assert passes == (against_torch.torch_check(case) == against_torch.PASSED), case


@pytest.mark.slow  # solving one shape of legacy against torch: 30 to 90 s
def test_legacy_accepting_negative_groups_is_solved_against_torch_and_confirmed():
    """The issue's example: sampling never produced it; the solver must, and real torch
    must confirm it (the model accepts, torch rejects groups.nonpos)."""
    pytest.importorskip("torch")
    found = against_torch.disagreements("legacy", [Shape(3, False, None)])
    by_key = {(d.kind, d.check): d for d in found}
    d = by_key[("missing-check", "groups.nonpos")]
    assert d.witness.groups < 0
    assert d.witness.input.sizes[1] == 0 and d.witness.weight.sizes[1] == 0
    assert d.witness.weight.sizes[0] % d.witness.groups == 0
    assert model.run(d.witness, "legacy").outcome.verdict == "accept"
    assert d.torch.check == "groups.nonpos"
    assert d.status == against_torch.FINDING
    # Every witness was run for real, and none shows the symbolic steps wrong.
    assert all(d.status != against_torch.SOLVER for d in found), [d.describe() for d in found]


@pytest.mark.slow  # solving one shape of current against torch: 30 to 90 s
def test_prove_against_torch_on_current_lists_what_remains(tmp_path):
    """On current every disagreement on rank 3 is explained or reported; the JSON says
    which, and the exit code is 1 exactly when one is a finding or an infidelity."""
    pytest.importorskip("torch")
    out, err = io.StringIO(), io.StringIO()
    args = ["prove", "--revision", "current", "--rank", "3", "--no-judge", "--json"]
    code = cli.main([*args, "--against", "torch"], out, err)
    data = json.loads(out.getvalue())
    statuses = [d["status"] for d in data["against"]]
    assert statuses and all(statuses)
    counted = [s for s in statuses if s in against_torch.COUNTED]
    assert code == (1 if counted or any(s["status"] != "proven" for s in data["sites"]) else 0)
    for d in data["against"]:
        if d["status"] in (against_torch.FINDING, against_torch.KNOWN):
            # confirmed: real torch and the concrete model answer apart
            assert (d["torch"]["verdict"] == "accept") != (d["model"]["verdict"] == "accept")


CONFIRMED = [
    # (revision, kind, check, witness, status): legacy accepts negative groups
    (
        "legacy",
        "missing-check",
        "groups.nonpos",
        conv(input=t(1, 0, 1), weight=t(1, 0, 1), bias=None, groups=-1),
        against_torch.FINDING,
    ),
    # a regular call never reads output_padding: an intentional difference
    (
        "current",
        "missing-check",
        "output_padding.range",
        conv(bias=None, output_padding=(-1,)),
        against_torch.KNOWN,
    ),
    # torch's Slow2d backend rejects a kernel dim of 0 too (step 4)
    ("current", "over-strict", "kernel.nonpos", conv(weight=t(4, 2, 0)), against_torch.BACKEND),
    # torch cannot create an input of 3 * (2^31 - 1)^2 floats
    (
        "current",
        "over-strict",
        "input.stride_too_large",
        conv(
            input=t(3, 2**31 - 1, 2**31 - 1),
            weight=t(5, 2**31 - 1, 1),
            bias=None,
            stride=(2**31 - 1,),
            padding=(2**31 - 1,),
        ),
        against_torch.STORAGE,
    ),
    # a claim the concrete steps do not bear out: the solver's own error
    ("current", "missing-check", "groups.nonpos", conv(), against_torch.SOLVER),
]


def test_each_witness_is_classified_by_real_torch_and_the_concrete_runs():
    pytest.importorskip("torch")
    from convcheck.ops.convolution.torch_oracle import TorchJudge

    with TorchJudge(jobs=1, threads=against_torch.THREADS) as judge:
        for revision in ("legacy", "current"):
            rows = [row for row in CONFIRMED if row[0] == revision]
            found = [against_torch.TorchDisagreement(k, c, "by hand", w) for _, k, c, w, _ in rows]
            against_torch.confirm(revision, found, judge)
            assert [d.status for d in found] == [row[-1] for row in rows], found
