"""The shrinker keeps a signature and reaches small, simple cases."""

from builders import conv, conv_t, t

from convcheck import model
from convcheck.case import Case
from convcheck.findings import findings
from convcheck.fixedint import INT64_MAX
from convcheck.judges import Judgement
from convcheck.shrink import minimize, simpler_ints


def model_signatures(case, revision="legacy"):
    wrapped, exact, found = model.classify(case, revision)
    return {f.signature for f in findings(Judgement(case, revision, wrapped, exact, found))}


def keeps(signature):
    return lambda cases: [signature in model_signatures(c) for c in cases]


def test_simpler_ints_are_simpler_and_specials_come_first():
    assert simpler_ints(5)[:5] == [0, 1, -1, 2, -2]
    assert simpler_ints(0) == []
    assert simpler_ints(-1) == [0, 1]
    assert all(abs(v) < 2**62 for v in simpler_ints(2**62)[:-1])
    assert 2**62 - 1 in simpler_ints(2**62)


def test_groups_overflow_shrinks_to_the_thread_example_shape():
    big = conv_t(
        input=t(2, 6, 5, 5, order=(0, 2, 3, 1)),
        weight=t(6, 4, 3, 3, dtype="float32"),
        out=t(1, 1, 1, 1, order=(0, 2, 3, 1)),
        bias=t(1),
        stride=(3, 2),
        padding=(1, 1),
        dilation=(1, 2),
        output_padding=(1, 1),
        groups=INT64_MAX - 5,
    )
    signature = ("ordering", "bias_shape.groups_mul")
    assert signature in model_signatures(big)
    small = minimize(big, keeps(signature))
    assert signature in model_signatures(small)
    assert small.input.rank == 3 and small.input.dim_order is None
    assert small.bias.sizes == (1,)
    assert len(small.stride) == 1 and small.transposed
    assert sum(small.weight.sizes) <= 5
    # The simplest groups that still overflows: a power of two, times weight.size(1).
    assert small.groups * small.weight.sizes[1] > INT64_MAX
    assert small.groups & (small.groups - 1) == 0


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
