"""The contract every registered engine keeps (a new engine gets these tests for free).

An engine proposes cases through ``campaign.submit`` until ``campaign.exhausted``: it
stops at the case budget exactly, the same seed gives the same campaign, and
``until_first`` stops it at the first finding about the kernel; all of it also when
shards judge (``--jobs 2``: ``convcheck.shards``).
"""

import subprocess
import sys

import pytest

from convcheck import corpus, engines
from convcheck.campaign import Budget, Campaign
from convcheck.errors import ConvcheckError
from convcheck.judges import Judges

CASES = 200


# Solving comes before the solver engine's first case: tens of seconds each time.
SLOW = {"solver"}


@pytest.fixture(
    params=[
        pytest.param(name, marks=[pytest.mark.slow] if name in SLOW else [])
        for name in engines.names()
    ]
)
def engine(request):
    why = engines.unavailable(request.param)
    if why:
        pytest.skip(why)
    return request.param


@pytest.fixture(params=[1, 2], ids=["one-process", "shards"])
def shards(request, engine):
    if request.param > 1 and engine == "atheris":
        pytest.skip("the atheris engine judges in a child process of its own, unsharded")
    return request.param


@pytest.fixture(scope="module")
def judges():
    with Judges("legacy", jobs=1, use_torch=False) as judges:
        yield judges


def campaign(judges, engine, seed, budget, shards):
    run = Campaign(judges, budget=budget, shards=shards)
    run.explore(engines.load(engine), seed)
    return run


def test_stops_at_the_case_budget_and_repeats_with_its_seed(judges, engine, shards):
    # atheris starts from valid calls, not reproducers: its first finding takes hundreds
    # of cases, as its coverage of the model leads it (1,016 with this seed; 248 before
    # the model ran once where both arithmetics agree).
    cases = 8 * CASES if engine == "atheris" else CASES
    first = campaign(judges, engine, 3, Budget(cases=cases), shards)
    again = campaign(judges, engine, 3, Budget(cases=cases), shards)
    assert first.stats.cases == again.stats.cases == cases
    assert first.found, f"legacy shows findings within {cases} cases"
    assert sorted(first.found) == sorted(again.found)
    if shards == 1:
        # The same calls too, not just the same signatures: atheris' batches and its
        # corpus are read by case count, never by the clock.
        assert {k: f.case for k, f in first.found.items()} == {
            k: f.case for k, f in again.found.items()
        }


@pytest.mark.parametrize("folder", ["same", "apart"])
def test_findings_met_again_are_kept_as_known(judges, engine, tmp_path, folder):
    """A second campaign that knows the first one's findings meets them again: it holds
    them (the report lists them as known) and calls none of them new; also when its own
    corpus folder is another one (``ci`` keeps the reviewed corpus apart). Not
    necessarily all of them, nor only them: atheris' coverage counts the model code its
    callback runs, the judging of a batch included, and its known findings change that
    judging, so its second run is not the first one replayed; in the same folder it also
    starts from the first one's reproducers."""
    cases = 8 * CASES if engine == "atheris" else CASES
    first = Campaign(judges, tmp_path / "first", budget=Budget(cases=cases))
    first.explore(engines.load(engine), 3)
    known = {key for entry in corpus.load_all(tmp_path / "first") for key in entry.keys}
    assert known == set(first.found)
    where = tmp_path / ("first" if folder == "same" else "again")
    again = Campaign(judges, where, known=known, budget=Budget(cases=cases))
    again.explore(engines.load(engine), 3)
    assert set(again.found) & set(first.found), "the same seed meets them again"
    assert not {f.key for f in again.new_findings()} & set(first.found)


def test_until_first_stops_at_a_finding_about_the_kernel(judges, engine, shards):
    run = campaign(judges, engine, 3, Budget(cases=10 * CASES, until_first=True), shards)
    assert run.new_findings(about_kernel=True)
    assert run.stats.cases < 10 * CASES


def test_an_unknown_engine_is_a_clear_error():
    with pytest.raises(ConvcheckError, match="engine='afl' must be one of random, "):
        engines.load("afl")


def test_a_missing_dependency_is_named(monkeypatch):
    monkeypatch.setitem(
        engines.ENGINES, "absent", engines.Provider("x", needs="no_such_module", extra="x")
    )
    assert engines.unavailable("absent") == (
        "no_such_module is not installed (pip install 'convcheck[x]')"
    )
    with pytest.raises(ConvcheckError, match="engine='absent' cannot run: no_such_module"):
        engines.load("absent")


def test_importing_the_engines_imports_no_model():
    """The atheris child runs as ``python -m convcheck.engines._atheris_child``, which
    imports this package first: a model imported there is imported before the child
    instruments it, and libFuzzer then sees none of its coverage (and finds nothing)."""
    code = (
        "import sys, convcheck.engines; "
        "print([m for m in sys.modules if m.startswith(('convcheck.model', 'convcheck.ops.'))])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
