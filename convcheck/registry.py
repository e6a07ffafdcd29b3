"""What an op is (the ``Op`` protocol the core asks), and which ops there are.

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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from convcheck.validation import check_choice

if TYPE_CHECKING:
    from convcheck.case import Case
    from convcheck.steps import Revision
    from convcheck.torch_mapping import TorchMapping

__all__ = [
    "DEFAULT_OP",
    "OPS",
    "NativeKernel",
    "Op",
    "SYMBOLIC",
    "Solvable",
    "TensorSkeleton",
    "case_from_json",
    "get",
    "loads_case",
    "names",
    "op_of",
    "register",
]

# name -> "module:attribute" of the op's ``OP``
OPS: dict[str, str] = {
    "convolution": "convcheck.ops.convolution:OP",
    "constant_pad_nd": "convcheck.ops.constant_pad_nd:OP",
    "max_pool2d_with_indices_backward": "convcheck.ops.max_pool2d_with_indices_backward:OP",
    "convolution_backward": "convcheck.ops.convolution_backward:OP",
    "avg_pool2d": "convcheck.ops.avg_pool2d:OP",
    "max_pool2d_with_indices": "convcheck.ops.max_pool2d_with_indices:OP",
}
DEFAULT_OP = "convolution"


# Kinds whose signature ends in the model's site of undefined behaviour: one UB shows as
# an ordering or an overflow to the model and as a crash to a sanitized kernel.
UB_KINDS = ("crash", "ordering", "overflow")


def class_of(
    signature: tuple[str, ...], classes: Mapping[str, Sequence[tuple[str, ...]]]
) -> str | None:
    """The class of ``classes`` (an op's known bugs: each class's signatures) a signature
    shows: one of its signatures, or a finding of another UB kind at one of its UB sites
    (a target that crashes where the model says "ordering" shows the same bug). An op's
    ``bug_class`` reads its table with it."""
    signature = tuple(signature)
    for name, signatures in classes.items():
        if signature in signatures:
            return name
    if signature[0] in UB_KINDS:
        for name, signatures in classes.items():
            if any(s[0] in UB_KINDS and s[-1] == signature[-1] for s in signatures):
                return name
    return None


@runtime_checkable
class Op(Protocol):
    """What the core asks of an op.

    ``case_type`` is the op's case: a frozen value whose fields are the call's tensors
    and parameters, with ``to_json`` / ``from_json`` (``convcheck.case``). ``revisions``
    maps each revision name (``convcheck.model.REVISIONS``) to its steps.

    The members from ``name`` on are optional: an op's class subclasses ``Op``
    (``class Window(registry.Op)``), inherits the defaults written here, which say nothing
    (the core then does without, or reads the schema), and overrides the ones it has
    more to say about (convolution's does). A class that does not subclass ``Op`` must
    have every member: ``get`` checks them all.
    """

    # Read-only (properties): an op's own types may be narrower (its case type, say).
    @property
    def case_type(self) -> type[Case]: ...

    @property
    def revisions(self) -> Mapping[str, Revision]: ...

    def build_case(self, src: Any, small: bool = False) -> Any:
        """A call built from a stream of choices (``convcheck.generate.Source``), usually
        valid in most respects, a few arguments at their edges; ``small`` keeps it cheap
        for judges that compute."""
        ...

    # -- optional members ------------------------------------------------------------

    @property
    def name(self) -> str:
        """The op's name in ``OPS``: by default the one its cases carry (``case_type.OP``)."""
        return self.case_type.OP

    @property
    def rare(self) -> tuple[Callable[[Any], Any], ...]:
        """Families of calls ``build_case`` almost never makes, each built from a stream
        of choices: the random engine gives one of them a case now and then. By default
        none."""
        return ()

    def describe_case(self, case: Any) -> str | None:
        """One line for a report: every tensor with its own dtype, sizes and dim order,
        then the other arguments. By default None: the core writes each argument by its
        name (``convcheck.describe.by_schema``)."""
        return None

    @property
    def case_legend(self) -> str | None:
        """How to read ``describe_case``'s line, for the report's legend. By default
        None: the core's legend of its own line (``convcheck.describe.TENSOR_LEGEND``)."""
        return None

    def bug_class(self, signature: tuple[str, ...]) -> str | None:
        """The name of the known bug class (an upstream report's) a finding's signature
        shows, None for none: the report names such rows and gathers each class's
        findings in one. By default the op knows no bug class."""
        return None

    @property
    def report_groups(self) -> Mapping[str, frozenset[str]]:
        """Steps whose checks are one computation, by the name of the report row that
        stands for them all: the kernel parting from the model at any of them is one bug
        (``{check}`` in a name: the check id without its step). By default none."""
        return MappingProxyType({})

    def valid_cases(self) -> tuple[Any, ...]:
        """A few valid calls that every revision handles alike and correctly, none of
        them a finding: where the atheris engine starts. By default none (libFuzzer then
        starts from ``build_case``'s choices)."""
        return ()

    @property
    def shrink_passes(self) -> Mapping[str, tuple[Callable[[Any], None], ...]]:
        """Shrink passes of the op's own, for integers its checks tie together in ways
        the core's passes cannot see, each under the name of the core's pass it runs
        right after (``convcheck.shrink.Shrinker``, which each is called with). By
        default none."""
        return MappingProxyType({})

    def list_length(self, case: Any) -> int | None:
        """How many values every int list of ``case`` should have (one per spatial dim,
        say), when the op's checks want one length of them all: the shrinker then drops
        values from a list whose length is wrong anyway. By default None: it only tries
        one value for all dims."""
        return None

    @property
    def native(self) -> NativeKernel | None:
        """The op's C kernel and the unit that calls it from the generic worker, so that
        the ``native`` judge (and a user's library of the op's ABI) judges its calls. By
        default None: the op is judged without a native kernel."""
        return None

    @property
    def torch(self) -> TorchMapping | None:
        """How torch judges the op's calls: its torch judge and its intentional
        differences from torch (``convcheck.torch_mapping``). By default None: the op is
        judged without torch, and asking for torch on it is an error."""
        return None

    @property
    def targets(self) -> Mapping[str, str]:
        """Kernels of the op that stand in for the native judge beside the core's (the
        user's library, convcheck's own build), by ``--target`` name: each to the module
        that starts it (``convcheck.targets``); a name ending in ``:`` takes what follows
        it (``executorch-source:DIR``). By default none."""
        return MappingProxyType({})

    def seed_shapes(self, revision: str) -> tuple[Any, ...]:
        """The solver shapes (``Solvable``) whose paths give the default engine's first
        cases (``convcheck.solver.seeds``): a few cheap ones that together meet every
        site. By default none."""
        return ()

    def solver_cases(self, revision: str) -> tuple[Any, ...]:
        """Solved calls of the op's own that the solver engine judges after every site's
        witness and band case: what the core's exploration cannot ask (convolution's:
        its witnesses against torch's check path). Called once per version of the code
        (the answer is cached); by default none."""
        return ()


@dataclass(frozen=True)
class NativeKernel:
    """An op's C pieces (``convcheck.native`` builds and runs them; docs/abi.md).

    ``sources``: each revision's library, C files of ``directory``; ``headers`` the files
    they include (they key the build cache). ``call_unit``: the C file, in ``directory``,
    built into the generic worker (``worker_main.c``): it turns the worker's neutral
    arguments (``convcheck/native/convcheck_unit.h``) into the op's typed call and calls
    the library. ``abi_header``: the header a user's library implements, which declares
    ``entry_points`` (the ABI version's, the name's, then the check and run entries) and
    whose version is ``abi_version``. ``library``: the stem of the cached libraries'
    names (``lib<library>-<revision>-...``). ``python_worker``: optionally, a module whose
    ``init(config)`` and ``handle(request)`` serve the same requests in Python, for a
    target where the C worker cannot be built (``NativeJudge(c_worker=False)``).
    """

    directory: Path
    sources: Mapping[str, tuple[str, ...]]
    headers: tuple[str, ...]
    call_unit: str
    abi_header: str
    entry_points: tuple[str, str, str, str]
    abi_version: int
    library: str
    python_worker: str | None = None


# A shape's value for an int or optional int the solver makes (any other value pins it).
SYMBOLIC = "symbolic"


@dataclass(frozen=True)
class TensorSkeleton:
    """A tensor of a solver shape: its rank and dtype (an output's sizes are all 1: the
    kernel computes them)."""

    rank: int
    dtype: str = "float32"


@runtime_checkable
class Solvable(Protocol):
    """What an op gives the solver (``convcheck.solver``), besides its steps: the shapes
    of its calls (``convcheck.solver.explore.Shape``, the concrete skeleton the symbolic
    integers fill in). An op without them is fuzzed and minimised, not proven."""

    def solver_shapes(self, revision: str, ranks: Any = None) -> list[Any]:
        """Every shape of ``revision``'s calls, or those of ``ranks``, simplest first."""
        ...

    def default_ranks(self, revision: str) -> tuple[int, ...]:
        """The ranks ``prove`` solves when none is asked for."""
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


def case_from_json(data: Any, op: str | None = None) -> Case:
    """A call of ``op`` (by default the default op) from decoded JSON; a malformed one
    raises ``InvalidCase``."""
    return get(op or DEFAULT_OP).case_type.from_json(data)


def loads_case(text: str | bytes, source: str = "case", op: str | None = None) -> Case:
    """A call of ``op`` from JSON text; every error message starts with ``source``."""
    return get(op or DEFAULT_OP).case_type.loads(text, source)


def op_of(case: Any) -> Op:
    """The op a case is a call of (each op's case type names it)."""
    return get(type(case).OP)
