"""Quality on the real target: a seeded campaign with a case budget against ExecuTorch
1.5.1 from PyPI finds its known bugs and minimises each (issue: a real target)."""

import pytest

from convcheck import campaign, engines
from convcheck.judges import Judges

pytestmark = pytest.mark.slow
CASES = 3072

pytest.importorskip("torch")
executorch_target = pytest.importorskip("convcheck.ops.convolution.executorch_target")
if not executorch_target.available():
    pytest.skip(executorch_target.INSTALL, allow_module_level=True)

EXPECTED = {
    "groups = 0 divides by zero (SIGFPE)": ("crash", "SIGFPE", "groups.weight0_rem"),
    "a short bias is read past its end": (
        "crash",
        "bias-overread (values)",
        "bias_reads.bias_index",
    ),
    "a bool bias calls a null loader (SIGSEGV)": ("crash", "SIGSEGV", "bias_load_fn.call"),
    "a kernel larger than the padded input is accepted": (
        "missing-check",
        "kernel.gt_padded_input",
    ),
    "a padding beyond 32 bits is cut and accepted": ("missing-check", "torch.padding_too_large"),
}


@pytest.fixture(scope="module")
def found():
    wanted = set(EXPECTED.values())
    with Judges("legacy", target="executorch", jobs=2) as judges:
        run = campaign.Campaign(judges, budget=campaign.Budget(cases=CASES))
        run.explore(engines.load("random"), seed=3)
        run.minimize_all(max_evaluations=200, seconds_each=20, only=lambda f: f.signature in wanted)
    return {f.signature: f for f in run.found.values()}


@pytest.mark.parametrize("bug", sorted(EXPECTED))
def test_finds_and_minimises(found, bug):
    signature = EXPECTED[bug]
    assert signature in found, sorted(found)
    case = found[signature].case
    assert case.input.numel + case.weight.numel <= 256, case.dumps()
