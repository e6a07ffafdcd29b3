"""The pooling ops' common object: each op's class names its case type, modules and
classes; the rest is the same for both."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType, ModuleType
from typing import Any

from convcheck.case import Case
from convcheck.ops.pooling import checks, current, legacy, native, report, solving, torch_judge
from convcheck.ops.pooling.checks import Call
from convcheck.registry import NativeKernel, Op, class_of
from convcheck.steps import Revision
from convcheck.torch_mapping import TorchMapping

# The check ids of every shared step, by its name (the two revisions' ``dilation`` check
# the same ids).
_SHARED_CHECKS = {**checks.CHECKS, **legacy.CHECKS, **current.CHECKS}


def revisions(*modules: ModuleType) -> MappingProxyType[str, Revision]:
    """Each revision module's steps, by the module's name (``legacy``, ``current``).

    A step's check ids and whether it runs in the loops are the step's own, whichever
    revision lists it: they are the shared steps' and those the op's modules declare
    (``CHECKS``, ``LOOP_STEPS``; a module that only reorders steps declares neither).
    """
    table = dict(_SHARED_CHECKS)
    loop_steps: set[str] = set()
    for module in modules:
        table.update(getattr(module, "CHECKS", {}))
        loop_steps.update(getattr(module, "LOOP_STEPS", ()))
    named = {}
    for module in modules:
        name = module.__name__.rpartition(".")[2]
        names = [step.__name__ for step in module.STEPS]
        ids = {step: table[step] for step in names if table.get(step)}
        loops = frozenset(loop_steps.intersection(names))
        named[name] = Revision(name, module.STEPS, loops, Call, MappingProxyType(ids))
    return MappingProxyType(named)


class PoolOp(Op):
    """A pooling kernel: what the two share is here, what is an op's own (its case type,
    which names it, construction, legacy bug classes and revision modules) is given."""

    case_legend = report.CASE_LEGEND
    targets = MappingProxyType(
        {
            "executorch": "convcheck.ops.pooling.executorch_target",
            "executorch-source:": "convcheck.ops.pooling.executorch_source",
        }
    )
    describe_case = staticmethod(report.describe_case)
    default_ranks = staticmethod(solving.default_ranks)

    def __init__(
        self,
        case_type: type[Case],
        build: Callable[[Any, bool], Any],
        classes: Mapping[str, Sequence[tuple[str, ...]]],
        modules: tuple[ModuleType, ...],
    ) -> None:
        self._case_type = case_type
        self._revisions = revisions(*modules)
        self._torch = torch_judge.mapping(case_type.OP)
        self._build = build
        self._classes = classes

    # Properties, as the protocol's: read-only.
    @property
    def case_type(self) -> type[Case]:
        return self._case_type

    @property
    def revisions(self) -> Mapping[str, Revision]:
        return self._revisions

    @property
    def torch(self) -> TorchMapping:
        """ATen's check path (``torch_judge``): verdicts and check ids, no values."""
        return self._torch

    @property
    def native(self) -> NativeKernel:
        """Our C kernel of both pooling ops (``native``)."""
        return native.KERNEL

    def build_case(self, src: Any, small: bool = False) -> Any:
        return self._build(src, small)

    def bug_class(self, signature: tuple[str, ...]) -> str | None:
        return class_of(signature, self._classes)

    def solver_shapes(self, revision: str, ranks: Any = None) -> list[solving.PoolShape]:
        return solving.shapes(self.name, ranks)

    def list_length(self, case: Any) -> int | None:
        """One value per spatial dim: two."""
        return 2
