"""The shrinker keeps a signature and reaches small, simple, valid-looking cases, at a
cost counted in calls."""

import json
from pathlib import Path

import pytest
from builders import conv, conv_t, groups_overflow, groups_overflow_by_hand, t

from convcheck import model, registry, shrink
from convcheck.case import Case
from convcheck.findings import findings
from convcheck.fixedint import INT64_MAX
from convcheck.judgement import Judgement
from convcheck.shrink import Shrinker, find_integer, minimize

EXAMPLES = Path(shrink.__file__).parent / "examples"


def model_signatures(case, revision="legacy"):
    wrapped, exact, found = model.classify(case, revision)
    return {f.signature for f in findings(Judgement(case, revision, wrapped, exact, found))}


def keeps(signature):
    return lambda cases: [signature in model_signatures(c) for c in cases]


class where:  # lower case: it reads as a phrase, minimize(case, where(...))
    """``keeps`` from a predicate on one case; records every case it judged."""

    def __init__(self, predicate):
        self.predicate, self.seen = predicate, []

    def __call__(self, cases):
        self.seen += cases
        return [self.predicate(c) for c in cases]


def simplest(**changes):
    """The simplest valid case, with some changes: every call is spent on the changes."""
    return conv(
        **{"input": t(1, 1, 1), "weight": t(1, 1, 1), "bias": None, "out": t(1, 1, 1), **changes}
    )


class Counted:
    """A predicate that records every argument it is called with."""

    def __init__(self, f):
        self.f, self.seen = f, []

    def __call__(self, n):
        self.seen.append(n)
        return self.f(n)


# -- find_integer on synthetic predicates ---------------------------------------------


@pytest.mark.parametrize("answer", [0, 1, 2, 3, 4, 5, 37, 1000, 2**31 - 1, 2**62, 2**63 - 7])
def test_find_integer_finds_a_threshold_in_logarithmic_calls(answer):
    f = Counted(lambda n: n <= answer)
    assert find_integer(f) == answer
    assert 0 not in f.seen  # f(0) is given
    assert len(f.seen) <= 2 * answer.bit_length() + 1
    assert len(set(f.seen)) == len(f.seen)


def test_find_integer_costs_one_call_when_nothing_moves():
    f = Counted(lambda n: False)
    assert find_integer(f) == 0
    assert f.seen == [1]


def test_find_integer_answer_is_local_where_f_is_not_monotone():
    # True on 0..5 and 9..20: the probe 1, 2, 4, 8 stops at 8, bisection finds 5.
    def f(n):
        return n <= 5 or 9 <= n <= 20

    n = find_integer(f)
    assert f(n) and not f(n + 1)
    assert n == 5


# -- integers: special values, then a probe and bisection ------------------------------


def test_an_integer_reaches_its_exact_threshold_in_logarithmic_calls():
    threshold = 3 * 2**40 + 12345
    counted = where(lambda c: c.groups >= threshold)
    small = minimize(simplest(groups=INT64_MAX), counted)
    assert small == simplest(groups=threshold)
    # target, one step, then a probe and a bisection of ~42 bits each.
    assert len(counted.seen) <= 2 + 2 * 42 + 2


def test_a_value_that_cannot_move_costs_two_calls():
    counted = where(lambda c: c.padding == (2**40,))
    assert minimize(simplest(padding=(2**40,)), counted) == simplest(padding=(2**40,))
    # The special 0, then one step toward it.
    assert [c.padding for c in counted.seen] == [(0,), (2**40 - 1,)]


def test_values_that_do_not_matter_go_to_their_simplest_valid_value_first():
    """Issue 12: stride and dilation 1, padding 0, sizes 1, float32, contiguous, no
    bias; nothing else in a minimised case should be wrong."""
    case = conv_t(
        input=t(3, 4, 9, 9, order=(0, 2, 3, 1), dtype="float64"),
        weight=t(4, 2, 3, 3, dtype="float64"),
        bias=t(2, dtype="float64"),
        out=t(3, 2, 7, 7, dtype="float64"),
        stride=(5, 7),
        padding=(-3, 2**40),
        dilation=(0, 3),
        output_padding=(2, -9),
        groups=2,
    )
    assert minimize(case, where(lambda c: True)) == simplest()
    small = minimize(case, where(lambda c: c.transposed))
    assert small == simplest(transposed=True)


def test_a_value_that_must_differ_stays_valid_when_it_can():
    # Any stride but 1 shows the "bug": 2 is the answer, not 0 or -1.
    assert minimize(conv(stride=(7,)), where(lambda c: c.stride != (1,))).stride == (2,)
    # A stride below 1 is the bug: the nearest invalid value, 0, not -1 or 7.
    assert minimize(conv(stride=(-7,)), where(lambda c: c.stride[0] < 1)).stride == (0,)
    assert minimize(conv(padding=(-(2**40),)), where(lambda c: c.padding[0] < 0)).padding == (-1,)
    # An empty dim only when the finding needs it; sizes shrink toward 1, not 0.
    small = minimize(conv(input=t(1, 2, 9)), where(lambda c: c.input.sizes[2] != 1))
    assert small.input.sizes == (1, 1, 2)


def test_parameter_lists_become_one_valid_value():
    case = conv(stride=(), padding=(4, 4, 4), dilation=(1, 3))
    small = minimize(case, where(lambda c: len(c.padding) != 1))
    assert (small.stride, small.dilation) == ((1,), (1,))
    assert small.padding == (0, 0)  # wrong length is the point: one element fewer each time


def test_integers_that_must_stay_equal_shrink_together():
    # Channels must match the weight's size(0), which groups 2 must divide: neither size
    # can move alone, and the step from 6 to 5 fails where 2 keeps.
    def valid(c):
        return c.input.sizes[1] == c.weight.sizes[0] and c.weight.sizes[0] % c.groups == 0

    start = simplest(input=t(1, 6, 1), weight=t(6, 1, 1), groups=2)
    small = minimize(start, where(lambda c: valid(c) and c.groups == 2))
    assert small == simplest(input=t(1, 2, 1), weight=t(2, 1, 1), groups=2)


# -- passes: counts, order, budget ----------------------------------------------------


def test_each_pass_counts_its_calls_and_useless_passes_go_last():
    # A shrink that moves nothing leaves the passes in the order written.
    unmoved = Shrinker(where(lambda c: True))
    unmoved.shrink(simplest())
    written = [p.name for p in unmoved.passes]
    case = conv(groups=INT64_MAX, bias=t(4, dtype="int8"), input=t(1, 2, 30))
    shrinker = Shrinker(where(lambda c: c.groups > 2**40 and c.bias is not None))
    small = shrinker.shrink(case)
    assert small.groups == 2**40 + 1 and small.bias == t(1)
    by_name = {p.name: p for p in shrinker.passes}
    assert sum(p.calls for p in shrinker.passes) == shrinker.evaluations
    assert by_name["drop_optionals"].calls >= 1 and by_name["drop_optionals"].shrinks == 0
    assert by_name["shrink_ints"].shrinks >= 1
    # Useful passes in the order written, then the never-useful ones, also in that order.
    useful = [n for n in written if by_name[n].shrinks]
    useless = [n for n in written if not by_name[n].shrinks]
    assert useful and useless
    assert [p.name for p in shrinker.passes] == useful + useless


def test_the_budget_is_checked_before_every_candidate(monkeypatch):
    counted = where(lambda c: c.groups > 2**40)
    small = minimize(conv(groups=INT64_MAX), counted, 7)
    assert len(counted.seen) == 7
    assert small.groups > 2**40  # what was reached is kept

    clock = [0.0]
    monkeypatch.setattr(shrink.time, "monotonic", lambda: clock[0])

    def slow(cases):
        clock[0] += 1.0  # each judgement takes a second of the fake clock
        return [c.groups > 2**40 for c in cases]

    shrinker = Shrinker(slow, seconds=5)
    shrinker.shrink(conv(groups=INT64_MAX))
    assert shrinker.evaluations == 6  # the sixth starts at t=5, the seventh would be late


# -- quality: what a person would have written ----------------------------------------


def test_groups_overflow_shrinks_to_hand_minimal_within_the_default_budget():
    signature = ("ordering", "bias_shape.groups_mul")
    assert signature in model_signatures(groups_overflow())
    shrinker = Shrinker(keeps(signature), max_evaluations=600)  # the campaign's budget
    assert shrinker.shrink(groups_overflow()) == groups_overflow_by_hand()
    # Before find_integer: 600 calls, 541 on groups, and still weight [6, 4, 3].
    assert shrinker.evaluations <= 200
    assert {p.name: p.calls for p in shrinker.passes}["shrink_ints"] <= 130


def test_the_bundled_groups_overflow_example_shrinks_to_the_same_case():
    case = registry.case_from_json(
        json.loads((EXAMPLES / "groups_overflow_before_validation.json").read_text())
    )
    small = minimize(case, keeps(("ordering", "bias_shape.groups_mul")), 600)
    assert small == groups_overflow_by_hand()


@pytest.mark.parametrize(
    "start, signature, expected",
    [
        # corpus/ordering-bias-shape-groups-mul: w.size(1) 3 was a local minimum for groups
        # 3074457345618258603; the trade makes it 2 and groups 2^62.
        (
            conv(input=t(0, 0, 0), weight=t(1, 3, 1), bias=t(0), out=t(1, 1, 1), groups=2**62 - 2),
            ("ordering", "bias_shape.groups_mul"),
            conv(input=t(1, 1, 1), weight=t(1, 2, 1), bias=t(0), out=t(1, 1, 1), groups=2**62),
        ),
        # corpus/ordering-output-sizes-dim-dilated-kernel: a kernel of 2^31 against a
        # dilation of 2^33 becomes a kernel of 3 against 2^62; the three channels, the
        # weight's three and groups 3 go to 1 together.
        (
            conv(
                input=t(0, 3, 0),
                weight=t(3, 1, 2147483645),
                bias=None,
                dilation=(8589934589,),
                groups=3,
            ),
            ("ordering", "output_sizes.dim*.dilated_kernel"),
            conv(input=t(1, 1, 1), weight=t(1, 1, 3), bias=None, out=t(1, 1, 1), dilation=(2**62,)),
        ),
    ],
)
def test_a_small_factor_is_traded_for_a_larger_wide_one(start, signature, expected):
    shrinker = Shrinker(keeps(signature), max_evaluations=600)
    assert shrinker.shrink(start) == expected
    assert {p.name: p.shrinks for p in shrinker.passes}["trade"] >= 1


def crashes_at(site_prefix, revision="legacy"):
    """``keeps`` from the sanitized crash the model foresees in the kernel's checks."""

    def predicate(case):
        wrapped, _, _ = model.classify(case, revision)
        crash_site = model.predict(wrapped, with_loops=False).crash_site
        return crash_site is not None and crash_site.startswith(site_prefix)

    return where(predicate)


def test_a_large_size_is_traded_for_a_raised_parameter():
    # A campaign's case: out's strides overflow int32 through 698369 channels times a
    # length of 3075, and neither moves alone. A person writes two channels and a padding
    # that makes the length about 2^30.
    start = conv(input=t(1, 698369, 3075), weight=t(698369, 1, 1), bias=None, groups=698369)
    keeps_crash = crashes_at("out_strides.")
    assert keeps_crash([start]) == [True]
    shrinker = Shrinker(keeps_crash, max_evaluations=600)
    small = shrinker.shrink(start)
    assert {p.name: p.shrinks for p in shrinker.passes}["trade_for_lists"] >= 1
    assert small.weight.sizes == (2, 1, 1) and small.input.sizes == (1, 1, 1), small
    assert small.groups == 1, "groups divided with the input's channels"
    assert 2**29 <= small.padding[0] < 2**30, small
    assert shrinker.evaluations <= 300


@pytest.mark.parametrize(
    "start, wanted, expected",
    [
        # two output channels, which groups 2 splits in two
        (
            conv(input=t(1, 6, 5), weight=t(6, 3, 3), bias=None, out=t(1, 6, 3), groups=2),
            "weight",
            conv(input=t(1, 1, 1), weight=t(2, 1, 1), bias=None, out=t(1, 1, 1)),
        ),
        # two input channels, and a bias, whose length is w.size(1) times groups
        (
            conv_t(input=t(1, 6, 5), weight=t(6, 3, 3), bias=t(6), out=t(1, 6, 7), groups=2),
            "input",
            conv_t(input=t(1, 2, 1), weight=t(2, 1, 1), bias=t(1), out=t(1, 1, 1)),
        ),
    ],
    ids=["regular", "transposed"],
)
def test_groups_are_divided_with_the_channels_that_are_their_multiples(start, wanted, expected):
    # Equal sizes and groups shrink as one down to 2, where groups cannot leave 2 alone,
    # nor the channels that are its multiples.
    def two_channels(case):
        wrapped, _, _ = model.classify(case, "current")
        return (
            (case.transposed, case.bias is None) == (start.transposed, start.bias is None)
            and wrapped.outcome.verdict == "accept"
            and getattr(case, wanted).sizes[wanted == "input"] >= 2
        )

    assert two_channels(start)
    shrinker = Shrinker(where(two_channels), max_evaluations=600)
    assert shrinker.shrink(start) == expected
    assert {p.name: p.shrinks for p in shrinker.passes}["divide_groups"] >= 1


def test_shrinking_never_slides_to_another_bug():
    case = conv(groups=0, padding=(2**62,), input=t(1, 2, 5))
    signature = ("ordering", "groups.weight0_rem")
    small = minimize(case, keeps(signature))
    assert small.groups == 0
    assert signature in model_signatures(small)


def test_minimize_is_deterministic():
    case = conv(padding=(2**40 + 12345,), input=t(2, 2, 9), bias=t(4, dtype="float64"))
    signature = ("overflow", "output_sizes.dim*.narrow")
    first = minimize(case, keeps(signature))
    assert first == minimize(case, keeps(signature))
    assert isinstance(first, Case) and first.bias is None
