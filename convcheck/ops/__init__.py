"""Ops: everything that is about one kernel, behind one interface; and their registry.

An *op* is a kernel whose argument checks convcheck hunts in (``convolution``, and the
kernels that share its helpers). The core (cases, the step runner, engines, judges,
findings, shrinking, the corpus, the solver, the report, the CLI) names no parameter of
any op: it asks the op. An op is a folder ``convcheck/ops/<name>/`` whose package holds
an ``OP`` that keeps the ``Op`` protocol, and one line in ``OPS`` below; an op of another
package declares itself as an entry point of the group ``convcheck.ops`` (``name =
"package.module:OP"``), or calls ``register``. ``docs/adding-an-op.md`` walks through
adding one.

The registry holds import paths, not modules: an op is imported the first time it is
asked for, so a campaign on one op never imports another's torch mapping or C build.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from convcheck.validation import check_choice

if TYPE_CHECKING:
    from convcheck.case import Case
    from convcheck.model.steps import Revision

__all__ = ["DEFAULT_OP", "OPS", "Op", "get", "names", "op_of", "register"]

# name -> "module:attribute" of the op's ``OP``
OPS: dict[str, str] = {
    "convolution": "convcheck.ops.convolution:OP",
}
DEFAULT_OP = "convolution"


@runtime_checkable
class Op(Protocol):
    """What the core asks of an op.

    ``case_type`` is the op's case: a frozen value whose fields are the call's tensors
    and parameters, with ``to_json`` / ``from_json`` (``convcheck.case``). ``revisions``
    maps each revision name (``convcheck.model.REVISIONS``) to its steps.
    """

    # Read-only (properties): an op's own types may be narrower (its case type, say).
    @property
    def name(self) -> str: ...

    @property
    def case_type(self) -> type[Case]: ...

    @property
    def revisions(self) -> Mapping[str, Revision]: ...

    @property
    def rare(self) -> tuple[Callable[[Any], Any], ...]:
        """Families of calls ``build_case`` almost never makes, each built from a stream
        of choices: the random engine gives one of them a case now and then."""
        ...

    def build_case(self, src: Any, small: bool = False) -> Any:
        """A call built from a stream of choices (``convcheck.generate.Source``), usually
        valid in most respects, a few arguments at their edges; ``small`` keeps it cheap
        for judges that compute."""
        ...


def register(name: str, path: str) -> None:
    """Make the op at ``path`` (``"module:attribute"``) known as ``name``: for ops that
    live outside this package (a test's toy op, a user's own)."""
    OPS[name] = path
    get.cache_clear()


def names() -> tuple[str, ...]:
    _discover()
    return tuple(OPS)


@functools.cache
def _discover() -> None:
    """Ops that other installed packages declare (entry points of ``convcheck.ops``),
    looked for once, the first time a name is needed."""
    for entry in importlib.metadata.entry_points(group="convcheck.ops"):
        OPS.setdefault(entry.name, entry.value)


@functools.cache
def get(name: str = DEFAULT_OP) -> Op:
    """The op called ``name``; an unknown name is a ``ConvcheckError`` naming the known ones."""
    if name not in OPS:
        _discover()
    check_choice("op", name, OPS)
    module, _, attribute = OPS[name].partition(":")
    op = getattr(importlib.import_module(module), attribute)
    assert isinstance(op, Op), f"{OPS[name]} does not keep the Op protocol"
    return op


def op_of(case: Any) -> Op:
    """The op a case is a call of (each op's case type names it)."""
    return get(type(case).OP)
