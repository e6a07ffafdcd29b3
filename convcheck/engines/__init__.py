"""Engines: what proposes cases to a campaign, one module each, found through one registry.

An engine is a function ``explore(campaign, seed) -> None`` that proposes cases through
``campaign.submit`` until ``campaign.exhausted`` (a time or case budget, or the first
finding: ``campaign.budget`` says which). ``campaign.room(n)`` caps a batch to the case
budget, so that a case budget with a seed gives the same campaign on any machine;
``campaign.batch(n)`` also starts small and grows, so that the first findings come early.

The registry maps a name to the module that holds ``explore`` (imported only when used)
and to the module it needs, if any; adding an engine is one line here.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import TYPE_CHECKING, NamedTuple

from convcheck.errors import ConvcheckError
from convcheck.validation import check_choice

if TYPE_CHECKING:
    # The campaign is what an engine is given; importing it here would import the model
    # before the atheris child instruments it.
    from convcheck.campaign import Explore


class Provider(NamedTuple):
    module: str  # holds ``explore(campaign, seed)``
    ci: bool = False  # shares the time of ``convcheck ci``'s campaign
    needs: str = ""  # a module that may not be installed
    extra: str = ""  # the extra of convcheck that installs it


ENGINES: dict[str, Provider] = {
    "random": Provider("convcheck.engines.random", ci=True),
    "hypothesis": Provider("convcheck.engines.hypothesis"),
    "atheris": Provider("convcheck.engines.atheris", ci=True, needs="atheris", extra="fuzz"),
    "solver": Provider("convcheck.engines.solver", needs="z3", extra="solver"),
}


def names(ci: bool = False) -> list[str]:
    """Every engine's name, or only the ones ``convcheck ci`` runs, in order."""
    return [name for name, provider in ENGINES.items() if provider.ci or not ci]


def unavailable(name: str) -> str:
    """Why the engine cannot run here, or "" when it can."""
    provider = ENGINES[check_choice("engine", name, ENGINES)]
    if provider.needs and importlib.util.find_spec(provider.needs) is None:
        return f"{provider.needs} is not installed (pip install 'convcheck[{provider.extra}]')"
    return ""


def load(name: str) -> Explore:
    """The engine's ``explore``; a ConvcheckError when it is unknown or cannot run here."""
    why = unavailable(name)
    if why:
        raise ConvcheckError(f"engine={name!r} cannot run: {why}")
    explore: Explore = importlib.import_module(ENGINES[name].module).explore
    return explore
