"""The solver on the pooling ops, through their shapes alone (``pooling/solving.py``):
``current`` proven free of undefined behaviour at every site, ``legacy`` witnessing each
UB class of ``known_bugs``. A minute or more of solving each: slow."""

import pytest

pytest.importorskip("z3")

from convcheck import model, registry  # noqa: E402
from convcheck.solver import prove  # noqa: E402
from convcheck.solver.explore import default_ranks, shapes  # noqa: E402
from convcheck.solver.symbolic import PROVEN, WITNESS  # noqa: E402

pytestmark = pytest.mark.slow

OPS = ("avg_pool2d", "max_pool2d_with_indices")


def _prove(op, revision, *only):
    """``prove`` on the shapes that match one of ``only`` (each a dict of shape fields),
    or on every shape. Two processes: CI runs the slow tests one at a time, on two cores,
    and the answers do not depend on how the shapes are shared out (z3's step limit)."""
    todo = shapes(revision, default_ranks(revision, op), op)
    if only:
        todo = [s for s in todo if any(all(getattr(s, k) == v for k, v in o.items()) for o in only)]
    # Witnesses unminimised: minimising avg_pool2d's loop witnesses took past 30 minutes.
    return prove(revision, only=todo, op=op, minimise=False, jobs=2)


@pytest.mark.parametrize("op", OPS)
def test_current_is_proven_at_every_site(op):
    report = _prove(op, "current")
    assert report.complete
    undefined = [s for s in report.sites if s.undefined]
    assert undefined and all(s.status == PROVEN for s in undefined), [
        (s.site, s.status) for s in undefined if s.status != PROVEN
    ]


# Each UB class the model can see, and a site of it the solver must witness.
UB_CLASSES = {
    "avg_pool2d": {
        "stride 0 divides by zero": "output_sizes.dim*.div_stride",
        "unchecked stride overflows the output size": "output_sizes.dim*.stride_minus_1",
        "padded window's area overflows": "loops.pool_size",
        "strides past int32": "out_strides.dim*",
    },
    "max_pool2d_with_indices": {
        "stride 0 divides by zero": "output_sizes.dim*.div_stride",
        "unchecked stride overflows the output size": "output_sizes.dim*.stride_minus_1",
        "unchecked dilation overflows the output size": "output_sizes.dim*.dilated_kernel",
        "strides past int32": "out_strides.dim*",
    },
}


@pytest.mark.parametrize("op", OPS)
def test_legacy_witnesses_each_ub_class(op):
    only = [{"ceil_mode": True, "strided": True}]
    if op == "avg_pool2d":
        # Two shapes, each the cheapest that holds its classes: ceil_mode for the stride
        # overflow, count_include_pad for the window's area (100 s of solving; the one
        # shape with both, 260 s).
        only = [
            {"ceil_mode": True, "strided": True, "count_include_pad": False, "divisor": False},
            {"ceil_mode": False, "strided": True, "count_include_pad": True, "divisor": False},
        ]
    report = _prove(op, "legacy", *only)
    witnessed = {
        registry.get(op).bug_class(("crash", s.kind, model.site_family(s.site)))
        for s in report.sites
        if s.undefined and s.status == WITNESS
    }
    assert set(UB_CLASSES[op]) <= witnessed, witnessed
