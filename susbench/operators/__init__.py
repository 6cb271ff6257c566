"""Operators by name: the scripted baselines, and operators under test (people, agents) registered here.

The baselines live in their own table: they alone are `OracleBaseline`s and get the ground truth.
`register_operator` adds operators under test only, so a plugin can never be handed the oracle.
"""

from __future__ import annotations

from collections.abc import Callable

from susbench.errors import SusbenchError
from susbench.operators.base import (
    Limits,
    Operator,
    OperatorFactory,
    OperatorResult,
    Oracle,
    OracleBaseline,
    SubjectContext,
)
from susbench.operators.scripted import IdleOperator, ScriptedOperator

BASELINES: dict[str, Callable[[int], OracleBaseline]] = {
    "naive": lambda seed: ScriptedOperator("naive", seed, "naive"),
    "careful": lambda seed: ScriptedOperator("careful", seed, "careful"),
    "random": lambda seed: ScriptedOperator("random", seed, None),
}
OPERATORS: dict[str, OperatorFactory] = {"idle": IdleOperator}


def register_operator(name: str, factory: OperatorFactory) -> None:
    """Make an operator under test available to `susbench run --operator NAME`."""
    if name in BASELINES:
        raise SusbenchError(f"operator name {name!r} is a built-in scripted baseline; choose another")
    OPERATORS[name] = factory


def operator_names() -> list[str]:
    return sorted([*BASELINES, *OPERATORS])


def check_operator(name: str) -> str:
    if name not in BASELINES and name not in OPERATORS:
        raise SusbenchError(f"unknown operator {name!r}; expected one of: {', '.join(operator_names())}")
    return name


def make_operator(name: str, seed: int) -> Operator | OracleBaseline:
    """A fresh operator for one episode, seeded by the episode."""
    if check_operator(name) in BASELINES:
        return BASELINES[name](seed)
    operator = OPERATORS[name](seed)
    if isinstance(operator, OracleBaseline):
        raise SusbenchError(f"operator {name!r} is registered as an operator under test but is a baseline")
    return operator


__all__ = [
    "BASELINES",
    "OPERATORS",
    "Limits",
    "Operator",
    "OperatorResult",
    "Oracle",
    "OracleBaseline",
    "SubjectContext",
    "check_operator",
    "make_operator",
    "operator_names",
    "register_operator",
]
