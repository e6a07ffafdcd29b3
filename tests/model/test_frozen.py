"""``convcheck.frozen``: a frozen dataclass with a faster ``__init__`` is the same value as
``dataclass(frozen=True)`` makes; and the case's own shortcuts (``TensorSpec.rank`` kept,
``Op``'s text written when read) read as before."""

import dataclasses
import pickle

import pytest

from convcheck.case import TensorSpec
from convcheck.fixedint import Op, Wrapping
from convcheck.frozen import frozen


class _Fields:
    name: str
    count: int = 3
    tags: tuple = dataclasses.field(default_factory=tuple)
    seen: tuple = dataclasses.field(default=(), compare=False)
    kept: list = dataclasses.field(default_factory=list, init=False, repr=False, compare=False)


def _made(name, decorate):
    cls = type(name, (), {k: v for k, v in vars(_Fields).items() if not k.startswith("__")})
    cls.__annotations__ = dict(_Fields.__annotations__)
    return decorate(cls)


# Module-level, so that pickle finds them.
Fast = _made("Fast", frozen)
Plain = _made("Plain", dataclasses.dataclass(frozen=True))


@pytest.mark.parametrize(
    "args, kwargs",
    [(("a",), {}), (("a", 5), {}), (("a",), {"tags": (1,)}), ((), {"name": "b", "seen": (1,)})],
)
def test_a_frozen_value_is_what_dataclass_makes(args, kwargs):
    fast, plain = Fast(*args, **kwargs), Plain(*args, **kwargs)
    assert vars(fast) == vars(plain)
    assert repr(fast).replace("Fast", "Plain") == repr(plain)
    assert fast == Fast(*args, **kwargs) and hash(fast) == hash(Fast(*args, **kwargs))
    assert fast != Fast("other")
    assert fast.kept is not Fast(*args, **kwargs).kept  # a fresh default each time
    assert pickle.loads(pickle.dumps(fast)) == fast
    assert dataclasses.replace(fast, count=7).count == 7
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.count = 4
    with pytest.raises(TypeError):
        Fast()  # the field without a default is required


def test_frozen_refuses_what_it_cannot_build():
    class Later:
        x: int

        def __post_init__(self):
            pass

    with pytest.raises(AssertionError, match="__post_init__"):
        frozen(Later)


def test_a_spec_without_its_rank_kept_still_has_one():
    """A spec pickled before ``rank`` was kept (its dict without it) reads it as before."""
    spec = TensorSpec((2, 3, 4), "float32", (0, 2, 1))
    old = object.__new__(TensorSpec)
    old.__dict__.update({k: v for k, v in vars(spec).items() if k != "rank"})
    assert old.rank == spec.rank == 3
    assert old == spec and hash(old) == hash(spec)
    assert TensorSpec((1, 2), dim_order=(0, 1)).dim_order is None


def test_an_operations_text_reads_as_it_was_written():
    a = Wrapping()
    a.mul_i64(6, -7, "s")
    a.add_i64(2**63 - 1, 1, "t")  # overflows: its text is written at once
    assert [op.text for op in a.trace] == ["6 * -7", f"{2**63 - 1} + 1"]
    assert Op("s", "(int32_t)5", 5, "").text == "(int32_t)5"
