"""Mutants of our own ``current`` kernel that narrow one multiply to int32, as a kernel
author might: the default engine must report each within its first 1,000 judged cases.

Sampling alone meets the bias-length mutant about 13 times per million cases; the
engine's first cases are the solver's witnesses and width bands, built to meet it.
"""

import io
import json
import shutil

import pytest

pytest.importorskip("z3")

from convcheck.campaign import Budget, Campaign  # noqa: E402
from convcheck.cli import main  # noqa: E402
from convcheck.engines import random as random_engine  # noqa: E402
from convcheck.judges import Judges  # noqa: E402
from convcheck.native.build import HEADERS, SHARED_SOURCES, SOURCE_DIR, compile_shared  # noqa: E402

REVISION_FILE = "checks_current.c"

# (name, the line of checks_current.c, the same line with the multiply in int32)
MUTANTS = [
    (
        "bias_length",
        "int64_t expected = call->transposed ? call->groups * (int64_t)call->weight.sizes[1]",
        "int64_t expected = call->transposed ? (int32_t)call->groups * call->weight.sizes[1]",
    ),
    (
        "transposed_stride",
        "plan->out_sizes[2 + i] = (n - 1) * s - 2 * p + d * (k - 1) + op + 1;",
        "plan->out_sizes[2 + i] = (int32_t)(n - 1) * (int32_t)s - 2 * p + d * (k - 1) + op + 1;",
    ),
    (
        "dilated_kernel",
        "if (in + 2 * p < d * (k - 1) + 1) {",
        "if (in + 2 * p < (int32_t)d * (int32_t)(k - 1) + 1) {",
    ),
]


def build_mutant(directory, original: str | None = None, mutated: str = ""):
    """The sanitized ``current`` library with one line of its revision file replaced."""
    for name in (*SHARED_SOURCES, *HEADERS, REVISION_FILE):
        shutil.copy(SOURCE_DIR / name, directory / name)
    if original is not None:
        source = (directory / REVISION_FILE).read_text()
        assert source.count(original) == 1, "the line to mutate must be in the kernel once"
        (directory / REVISION_FILE).write_text(source.replace(original, mutated))
    sources = [directory / name for name in (*SHARED_SOURCES, REVISION_FILE)]
    return compile_shared(sources, "mutant", headers=[directory / name for name in HEADERS])


def fuzz(target, corpus, seed=0):
    argv = ["fuzz", "--revision", "current", "--no-torch", "--jobs", "2", "--corpus", str(corpus)]
    argv += ["--cases", "1000", "--seed", str(seed), "--minimize-time", "5"]
    if target is not None:
        argv += ["--target", str(target)]
    return main(argv, io.StringIO(), io.StringIO())


@pytest.mark.slow  # a sanitized build per mutant and 1,000 judged cases each
@pytest.mark.parametrize("name,original,mutated", MUTANTS, ids=[m[0] for m in MUTANTS])
def test_default_engine_kills_a_narrowed_multiply(tmp_path, name, original, mutated):
    library = build_mutant(tmp_path, original, mutated)
    corpus = tmp_path / "corpus"
    assert fuzz(library, corpus) == 1
    entries = [json.loads(p.read_text()) for p in corpus.glob("*.json")]
    assert entries, f"the {name} mutant was judged equal to the model"


@pytest.mark.slow
def test_the_unmutated_kernel_passes_the_same_campaign(tmp_path):
    """The mutants' findings come from the mutation: the kernel as shipped has none."""
    library = build_mutant(tmp_path)
    assert fuzz(library, tmp_path / "corpus") == 0


@pytest.mark.slow
def test_sampling_alone_misses_the_bias_length_mutant_in_the_same_budget(tmp_path):
    """What the solver's cases add: the same 1,000 cases, sampled only, find nothing."""
    library = build_mutant(tmp_path, *MUTANTS[0][1:])
    with Judges("current", target=str(library), jobs=2, use_torch=False) as judges:
        run = Campaign(judges, budget=Budget(cases=1000))
        random_engine.explore(run, 0, solved=False)
    assert run.stats.cases == 1000
    assert not run.new_findings(about_kernel=True)
