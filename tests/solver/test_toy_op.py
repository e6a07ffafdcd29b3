"""The solver explores an op it was never told about: the toy window op, given only its
shapes (``solvable_window.py``). ``legacy`` divides by the stride before it checks it;
``current`` checks first and has no undefined behaviour."""

import io
import json

import pytest

pytest.importorskip("z3")

from convcheck import cli, registry  # noqa: E402
from convcheck.fixedint import DIVISION_BY_ZERO  # noqa: E402
from convcheck.solver import prove  # noqa: E402
from convcheck.solver.explore import default_ranks, shapes  # noqa: E402
from convcheck.solver.symbolic import PROVEN, WITNESS  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def toy():
    # The witnesses are WindowCases: the toy itself must be known too (tests/ops may
    # have made it known already, for the whole session).
    added = [n for n in ("window", "solvable_window") if n not in registry.OPS]
    registry.register("window", "window_op:OP")
    registry.register("solvable_window", "solvable_window:OP")
    yield
    for name in added:
        del registry.OPS[name]
    registry.get.cache_clear()


def _prove(revision):
    only = shapes(revision, default_ranks(revision, "solvable_window"), "solvable_window")
    return prove(revision, only=only, jobs=1)


def test_legacy_divides_by_a_zero_stride():
    report = _prove("legacy")
    found = next(s for s in report.sites if s.kind == DIVISION_BY_ZERO)
    assert (found.site, found.status) == ("output_size.steps", WITNESS)
    assert found.witness.stride == (0,)
    assert found.witness.input.sizes == (1, 1, 1)  # minimised: the simplest call that does


def test_current_is_proven_free_of_undefined_behaviour():
    report = _prove("current")
    assert report.complete
    undefined = [s for s in report.sites if s.undefined]
    assert undefined and all(s.status == PROVEN for s in undefined)
    # The toy checks no element count: that one is the toy's own (a witness, not UB).
    assert {s.site for s in report.sites if s.status == WITNESS} == {"accepted.numel (window)"}


def test_prove_cli_takes_the_op():
    # Two processes (the default --jobs): a spawned worker knows the toy too.
    argv = ["prove", "--op", "solvable_window", "--revision", "legacy", "--no-judge"]
    out = io.StringIO()
    assert cli.main([*argv, "--json", "--no-cache"], out, io.StringIO()) == 1
    sites = json.loads(out.getvalue())["sites"]
    assert any(s["site"] == "output_size.steps" and s["status"] == WITNESS for s in sites)


def test_against_torch_needs_a_torch_check_path():
    argv = ["prove", "--op", "solvable_window", "--against", "torch", "--no-judge"]
    err = io.StringIO()
    assert cli.main(argv, io.StringIO(), err) == 2
    assert "op='solvable_window' has no torch check path" in err.getvalue()
