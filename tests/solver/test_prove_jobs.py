"""``prove`` in worker processes gives the report one process gives."""

import importlib

import pytest

pytest.importorskip("z3")

from convcheck.ops.convolution.solving import ConvolutionShape as Shape  # noqa: E402
from convcheck.solver import prove  # noqa: E402
from convcheck.solver.explore import explore  # noqa: E402
from convcheck.solver.symbolic import WITNESS, fork_order  # noqa: E402


def shape_of(path: str) -> str:
    return path.split(", branches")[0]


def answers(report) -> dict:
    """Everything the solver answered: every site's paths, statuses and witness. z3's
    work is bounded by steps, not by a clock, so two runs answer alike to the byte."""
    data = report.to_json()
    for site in data["sites"]:
        del site["seconds"]
    del data["seconds"]
    return data


@pytest.mark.slow  # two legacy shapes solved twice: 20 to 60 s
def test_two_workers_give_the_report_of_one_and_the_simplest_shapes_witnesses():
    # A site witnessed on both shapes keeps the first (regular) shape's witness, whichever
    # worker finishes first.
    only = [Shape(3, False, None), Shape(3, True, None)]
    alone = prove("legacy", only=only, jobs=1)
    side_by_side = prove("legacy", only=only, jobs=2)
    assert answers(side_by_side) == answers(alone)
    witnessed = [s for s in alone.sites if s.status == WITNESS]
    assert witnessed
    regular, transposed = (s.describe() for s in only)
    in_both = [
        s
        for s in witnessed
        if {shape_of(p.path) for p in s.paths if p.status == WITNESS} == {regular, transposed}
    ]
    assert in_both and all(shape_of(s.witness_path) == regular for s in in_both)
    assert side_by_side.shapes_done == alone.shapes_done == 2


def test_fork_order_is_the_order_of_one_depth_first_search():
    # prove's units merge their paths by fork_order: it must be the order one search of
    # the whole shape takes, or the report would depend on where the shape was cut.
    paths = list(explore("current", Shape(3, True, "float32")))
    assert len(paths) > 10 and any(len(p.forks) > 1 for p in paths)
    orders = [fork_order(p.forks) for p in paths]
    assert orders == sorted(orders) and len(set(orders)) == len(orders)


def test_a_shape_cut_into_units_gives_every_site_the_same_statuses(monkeypatch):
    only = [Shape(3, True, None)]
    whole = answers(prove("current", only=only, jobs=1))
    # The package's ``prove`` is the function; the module is what holds the unit size.
    module = importlib.import_module("convcheck.solver.prove")
    monkeypatch.setattr(module, "_UNIT_PATHS", 4)  # 30 paths: eight units or more
    cut = answers(prove("current", only=only, jobs=1))
    assert cut["paths"] == whole["paths"] > 20

    def statuses(data):
        return {(s["site"], s["kind"]): s["status"] for s in data["sites"]}

    assert statuses(cut) == statuses(whole)


def test_a_spent_time_budget_explores_nothing_and_says_so():
    report = prove("current", seconds=0, only=[Shape(3, True, None)], jobs=1)
    assert (report.shapes_done, report.shapes_total, report.paths) == (0, 1, 0)
    assert not report.complete and report.sites == []


@pytest.mark.parametrize("use", ["run", "unfold"])
def test_a_solver_process_that_dies_is_an_error_not_a_wait(use):
    """A worker killed mid-task (z3 aborting, the memory limit) ends the proof at once
    with a clear error (multiprocessing.Pool would wait for it for half an hour), and
    leaves no process behind."""
    import multiprocessing
    import os
    import time

    from convcheck.errors import ConvcheckError

    workers = importlib.import_module("convcheck.solver.prove")._workers
    before = set(multiprocessing.active_children())
    with pytest.raises(ConvcheckError, match="a solver process died"):
        with workers(2) as (run, unfold):
            if use == "run":
                run(os.abort, [()])
            else:
                unfold([(os.abort,)], lambda task, result: [])
    # A worker the broken pool was still stopping may take a moment to end (a bound for
    # a stuck test, not a speed check).
    for _ in range(100):
        if not set(multiprocessing.active_children()) - before:
            break
        time.sleep(0.05)
    assert set(multiprocessing.active_children()) <= before


def test_a_shape_cut_short_by_the_time_keeps_its_witnesses_minimised(monkeypatch):
    """The time runs out inside a shape: the paths its first units explored are reported,
    and their witnesses are minimised at the end (the shape never settles, so ``settle``
    does not hand them out), each still misbehaving at its site in the concrete model."""
    module = importlib.import_module("convcheck.solver.prove")
    monkeypatch.setattr(module, "_UNIT_PATHS", 4)
    explore_unit, units = module._explore_unit, []

    def two_units_in_time(revision, index, shape, stack, rlimit, deadline):
        units.append(stack)
        # A deadline long past from the third unit on: what a clock running out does.
        return explore_unit(revision, index, shape, stack, rlimit, 0.0 if len(units) > 2 else None)

    monkeypatch.setattr(module, "_explore_unit", two_units_in_time)

    def witnesses(minimise: bool):
        units.clear()
        report = prove(
            "legacy", seconds=3600, only=[Shape(3, False, None)], jobs=1, minimise=minimise
        )
        assert len(units) > 2  # the shape had more to explore than the time allowed
        assert (report.shapes_done, report.shapes_total) == (0, 1) and not report.complete
        assert 0 < report.paths <= 2 * 4
        witnessed = [site for site in report.sites if site.status == WITNESS]
        assert witnessed and all(site.agrees for site in witnessed)
        return {site.site: site.witness for site in witnessed}

    minimised, found = witnesses(True), witnesses(False)
    assert minimised.keys() == found.keys()
    assert minimised != found  # the paths' own inputs were shrunk, not kept
