"""Mutants of our own ``current`` kernel that narrow one multiply to int32, as a kernel
author might: the default engine must report each within its first 1,000 judged cases.

Sampling alone meets the bias-length mutant about 13 times per million cases; the
engine's first cases are the solver's witnesses and width bands, built to meet it.
"""

import io
import json

import pytest
from mutants import CURRENT, Mutant, build

pytest.importorskip("z3")

from convcheck.campaign import Budget, Campaign  # noqa: E402
from convcheck.cli import main  # noqa: E402
from convcheck.engines import random as random_engine  # noqa: E402
from convcheck.judges import Judges  # noqa: E402
from convcheck.native.build import build_library  # noqa: E402

MUTANTS = [
    Mutant(
        "bias_length",
        CURRENT,
        "int64_t expected = call->transposed ? call->groups * (int64_t)call->weight.sizes[1]",
        "int64_t expected = call->transposed ? (int32_t)call->groups * call->weight.sizes[1]",
    ),
    Mutant(
        "transposed_stride",
        CURRENT,
        "plan->out_sizes[2 + i] = (n - 1) * s - 2 * p + d * (k - 1) + op + 1;",
        "plan->out_sizes[2 + i] = (int32_t)(n - 1) * (int32_t)s - 2 * p + d * (k - 1) + op + 1;",
    ),
    Mutant(
        "dilated_kernel",
        CURRENT,
        "if (in + 2 * p < d * (k - 1) + 1) {",
        "if (in + 2 * p < (int32_t)d * (int32_t)(k - 1) + 1) {",
    ),
]


def fuzz(target, corpus, seed=0):
    argv = ["fuzz", "--revision", "current", "--no-torch", "--jobs", "2", "--corpus", str(corpus)]
    argv += ["--cases", "1000", "--seed", str(seed), "--minimize-time", "5"]
    if target is not None:
        argv += ["--target", str(target)]
    return main(argv, io.StringIO(), io.StringIO())


@pytest.mark.slow  # a sanitized build per mutant and 1,000 judged cases each
@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_default_engine_kills_a_narrowed_multiply(tmp_path, mutant):
    corpus = tmp_path / "corpus"
    assert fuzz(build(mutant), corpus) == 1
    entries = [json.loads(p.read_text()) for p in corpus.glob("*.json")]
    assert entries, f"the {mutant.name} mutant was judged equal to the model"


@pytest.mark.slow
def test_the_unmutated_kernel_passes_the_same_campaign(tmp_path):
    """The mutants' findings come from the mutation: the kernel as shipped has none."""
    assert fuzz(build_library("current"), tmp_path / "corpus") == 0


@pytest.mark.slow
def test_sampling_alone_misses_the_bias_length_mutant_in_the_same_budget(tmp_path):
    """What the solver's cases add: the same 1,000 cases, sampled only, find nothing."""
    with Judges("current", target=str(build(MUTANTS[0])), jobs=2, use_torch=False) as judges:
        run = Campaign(judges, budget=Budget(cases=1000))
        random_engine.explore(run, 0, solved=False)
    assert run.stats.cases == 1000
    assert not run.new_findings(about_kernel=True)
