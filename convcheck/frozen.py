"""``frozen``: ``dataclass(frozen=True)``, built in well under half the time.

A frozen dataclass's own ``__init__`` sets each field through ``object.__setattr__``, a
call per field, since its class forbids assignment: several times what writing its dict
costs. A campaign builds several a case (the case, each judge's outcome, the model's
runs, torch's verdict), a visible share of a shard's time per case
(``benchmarks/bench_percase.py``). ``frozen`` gives the class an ``__init__`` that
writes the instance's dict instead: the same state (so the same equality, hash, repr and
pickles), the same signature, without the calls. Written as ``dataclasses`` writes its
own: source text made from the fields, compiled once per class.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar, dataclass_transform

__all__ = ["frozen"]


_T = TypeVar("_T")


# A type checker reads the class as the frozen dataclass it is.
@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field,))
def frozen(cls: type[_T]) -> type[_T]:
    """``@dataclass(frozen=True)`` with the faster ``__init__`` (see the module). The
    class has no ``__post_init__``, and its fields are positional or keyword (no
    keyword-only ones)."""
    # Any: the class is rebuilt (a dataclass, a new __init__), which no static type says.
    made: Any = dataclasses.dataclass(cls, frozen=True, init=False)
    assert not hasattr(cls, "__post_init__"), f"{cls.__name__}: frozen runs no __post_init__"
    namespace: dict[str, object] = {"MISSING": dataclasses.MISSING}
    parameters: list[str] = []
    body = ["    fields = self.__dict__"]
    for f in dataclasses.fields(made):
        assert not f.kw_only, f"{cls.__name__}.{f.name}: frozen takes no keyword-only field"
        value = f.name
        if f.default is not dataclasses.MISSING:
            namespace[f"default_{f.name}"] = f.default
            default = f"default_{f.name}"
        elif f.default_factory is not dataclasses.MISSING:
            namespace[f"factory_{f.name}"] = f.default_factory
            default = "MISSING"
            value = f"factory_{f.name}() if {f.name} is MISSING else {f.name}"
        else:
            default = None
        if not f.init:
            value = f"factory_{f.name}()" if default == "MISSING" else f"default_{f.name}"
        elif default is None:
            parameters.append(f.name)
        else:
            parameters.append(f"{f.name}={default}")
        body.append(f"    fields[{f.name!r}] = {value}")
    source = f"def __init__(self, {', '.join(parameters)}):\n" + "\n".join(body)
    exec(source, namespace)  # noqa: S102 - text made above from the class's own fields
    init: Any = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    made.__init__ = init
    return made
