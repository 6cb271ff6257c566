"""Operators by name: the scripted baselines, and operators under test (people, agents, plugins).

The baselines live in their own table: they alone are `OracleBaseline`s and get the ground truth.
Operators under test are found by name in this order: `register_operator` (this process only), the
`susbench.operators` entry-point group (installed plugins, the built-in agents among them; a name
`family:label` whose family is an entry point names that plugin, e.g. `browsergym:<agent name>`), or a
`module:factory` path. The last two are resolved in every worker process by importing the named
module, so nothing depends on import-time registration in the parent; and none of them can be
handed the oracle.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import TYPE_CHECKING

from susbench.core.errors import SusbenchError
from susbench.core.models import Frozen
from susbench.operators.base import (
    BudgetEnded,
    Calling,
    Limits,
    Operator,
    OperatorFactory,
    OperatorResult,
    OperatorSettings,
    Oracle,
    OracleBaseline,
    Seated,
    SubjectContext,
)

if TYPE_CHECKING:
    from susbench.operators.scripted import Policy

ENTRY_POINT_GROUP = "susbench.operators"


# The scripted operators (and so Playwright) are imported when one is made, not to list the names
# (`susbench run --help`).
def _scripted(name: str, policy: Policy | None) -> Callable[[], OracleBaseline]:
    def make() -> OracleBaseline:
        from susbench.operators.scripted import ScriptedOperator

        return ScriptedOperator(name, policy)

    return make


def _idle(settings: OperatorSettings) -> Operator:
    from susbench.operators.scripted import IdleOperator

    return IdleOperator(settings)


BASELINES: dict[str, Callable[[], OracleBaseline]] = {
    "naive": _scripted("naive", "naive"),
    "careful": _scripted("careful", "careful"),
    "random": _scripted("random", None),
}
OPERATORS: dict[str, OperatorFactory] = {"idle": _idle}


def register_operator(name: str, factory: OperatorFactory) -> None:
    """Make an operator under test available to `susbench run --operator NAME` in this process
    (worker processes find installed plugins by entry point, or `module:factory` by import)."""
    if name in BASELINES:
        raise SusbenchError(f"operator name {name!r} is a built-in scripted baseline; choose another")
    OPERATORS[name] = factory


def plugin_names() -> list[str]:
    return sorted({point.name for point in entry_points(group=ENTRY_POINT_GROUP)})


def operator_names() -> list[str]:
    return sorted({*BASELINES, *OPERATORS, *plugin_names()})


def complete_operators(incomplete: str) -> list[str]:
    """Shell completion of `--operator`."""
    return [name for name in operator_names() if name.startswith(incomplete)]


def _load(name: str) -> object:
    """The factory an entry point or a `module:factory` path names, imported now."""
    points = [point for point in entry_points(group=ENTRY_POINT_GROUP) if point.name == name]
    target = points[0].value if points else name
    module_name, _, attribute = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise SusbenchError(
            f"operator {name!r}: cannot import {module_name!r} ({exc}); expected an installed module "
            "(for the built-in agents: pip install 'susbench-replay[agents]')"
        ) from None
    factory = getattr(module, attribute, None)
    if not callable(factory):
        raise SusbenchError(f"operator {name!r}: {module_name!r} has no callable {attribute!r}")
    return factory


def find_factory(name: str) -> OperatorFactory:
    """The factory of an operator under test, however it is known."""
    if name in OPERATORS:
        return OPERATORS[name]
    family = name.partition(":")[0]
    if name not in plugin_names() and family in plugin_names():
        return _load(family)  # type: ignore[return-value]  # a family of operators: `browsergym:<agent>`
    if name in plugin_names() or (":" in name and all(name.partition(":")[::2])):
        return _load(name)  # type: ignore[return-value]
    raise SusbenchError(
        f"unknown operator {name!r}; expected one of: {', '.join(operator_names())}, or module:factory"
    )


class OperatorCheck(Frozen):
    """What the run's parent learned by building the operator once: its settings are accepted, and
    which model server it calls (None for an operator that calls none)."""

    name: str
    endpoint: str | None = None

    @property
    def notice(self) -> str | None:
        """ "operator X calls URL (where the URL came from)", so no server is called unannounced."""
        return None if self.endpoint is None else f"operator {self.name!r} calls {self.endpoint}"


def check_operator(name: str, settings: OperatorSettings | None = None) -> OperatorCheck:
    """Refuse an unknown operator or settings it does not accept; an operator under test is built
    once here, in the parent, and thrown away (each worker builds its own)."""
    if name in BASELINES:
        given = (settings or OperatorSettings()).given()
        if given:
            raise SusbenchError(f"{', '.join(given)}: {name!r} is a scripted baseline and takes no settings")
        return OperatorCheck(name=name)
    operator = make_operator(name, settings)
    return OperatorCheck(name=name, endpoint=operator.endpoint if isinstance(operator, Calling) else None)


def is_seated(name: str) -> bool:
    """A person is at the screen (`Seated`), told from the operator's class without building one (a
    factory that is not a class is never seated)."""
    if name in BASELINES:
        return False
    factory = find_factory(name)
    return isinstance(factory, type) and issubclass(factory, Seated)


def make_operator(name: str, settings: OperatorSettings | None = None) -> Operator | OracleBaseline:
    """The operator of that name, for all the episodes of one worker."""
    if name in BASELINES:
        return BASELINES[name]()
    operator = find_factory(name)(settings or OperatorSettings())
    if isinstance(operator, OracleBaseline):
        raise SusbenchError(f"operator {name!r} is registered as an operator under test but is a baseline")
    return operator


__all__ = [
    "BASELINES",
    "ENTRY_POINT_GROUP",
    "OPERATORS",
    "BudgetEnded",
    "Limits",
    "Operator",
    "OperatorCheck",
    "OperatorFactory",
    "OperatorResult",
    "OperatorSettings",
    "Oracle",
    "OracleBaseline",
    "Seated",
    "SubjectContext",
    "check_operator",
    "find_factory",
    "is_seated",
    "make_operator",
    "operator_names",
    "register_operator",
]
