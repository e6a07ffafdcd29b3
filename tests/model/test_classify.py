"""overflow and ordering findings, and the property that ties the two arithmetics."""

import pytest
from builders import conv, conv_t, t
from hypothesis import given, settings

from convcheck import model
from convcheck.fixedint import INT64_MAX
from convcheck.generate import random_cases
from convcheck.strategies import cases


def kinds(case, revision="legacy"):
    return sorted((f.kind, f.site) for f in model.classify(case, revision)[2])


def test_groups_overflow_before_validation_is_an_ordering_finding():
    case = conv_t(input=t(1, 4, 5), weight=t(4, 4, 3), bias=t(1), groups=INT64_MAX)
    assert kinds(case) == [("ordering", "bias_shape.groups_mul")]


def test_groups_zero_divides_before_the_channel_check_rejects():
    assert kinds(conv(groups=0)) == [("ordering", "groups.weight0_rem")]


def test_huge_dilation_is_both_overflow_and_ordering():
    found = kinds(conv(input=t(1, 2, 3), dilation=(2**62,)))
    assert found == [
        ("ordering", "output_sizes.dim0.dilated_kernel"),
        ("overflow", "output_sizes.dim0.dilated_kernel"),
    ]


def test_narrowing_that_changes_the_answer_is_an_overflow():
    assert kinds(conv(padding=(2**40,))) == [("overflow", "output_sizes.dim0.narrow")]


def test_the_unsigned_wrap_of_a_transposed_size_is_an_overflow_without_ub():
    wrapped, exact, findings = model.classify(conv_t(stride=(2**62,)), "legacy")
    assert wrapped.ub == ()
    assert wrapped.outcome.out_sizes == (1, 2, 3)
    # Exactly, the size is 4 * 2^62 + 3: no tensor of that many elements can exist.
    assert exact.outcome.check == "out.resize"
    assert [f.kind for f in findings] == ["overflow"]


def test_current_rejects_the_thread_examples_without_findings():
    for case in [
        conv(groups=0),
        conv_t(input=t(1, 4, 5), weight=t(4, 4, 3), bias=t(1), groups=INT64_MAX),
        conv(input=t(1, 2, 3), dilation=(2**62,)),
        conv(padding=(2**40,)),
        conv_t(stride=(2**62,)),
    ]:
        assert kinds(case, "current") == []


@settings(max_examples=500, deadline=None)
@given(cases())
def test_without_ub_narrowing_or_a_wrap_both_arithmetics_agree(case):
    # An unsigned wrap is no event (C defines it), yet it changes a transposed size: the
    # C run's flagged operations, not only its events, say where the machine took over.
    for revision in model.REVISIONS:
        wrapped = model.run(case, revision)
        if model.overflow_site(wrapped) == "?":
            assert wrapped.outcome.same_answer(model.run(case, revision, exact=True).outcome)


@settings(max_examples=500, deadline=None)
@given(cases())
def test_current_has_no_overflow_or_ordering_anywhere(case):
    assert model.classify(case, "current")[2] == []


def classify_running_both(case, revision):
    """``classify`` without its shortcut: both arithmetics, always."""
    wrapped, exact = model.run(case, revision), model.run(case, revision, exact=True)
    return wrapped, exact, model.compare(wrapped, exact)


@pytest.mark.parametrize("revision", sorted(model.REVISIONS))
def test_one_run_stands_for_both_exactly_where_it_may(revision):
    """The shortcut keeps every outcome, event, site, trace and finding of running both,
    on the cases a campaign draws; and it is taken, and (legacy) also declined."""
    once = twice = 0
    for case in random_cases(5, 3000):
        classified = model.classify(case, revision)
        assert classified == classify_running_both(case, revision)
        wrapped, exact, _ = classified
        assert wrapped.exact is False and exact.exact is True
        if exact.steps is wrapped.steps:
            once += 1
        else:
            twice += 1
    assert once > 2000
    # current bounds its arguments before any arithmetic: no value ever leaves its type.
    assert twice > 100 if revision == "legacy" else twice == 0


@settings(max_examples=300, deadline=None)
@given(cases())
def test_one_run_stands_for_both_on_edge_cases(case):
    for revision in model.REVISIONS:
        assert model.classify(case, revision) == classify_running_both(case, revision)
