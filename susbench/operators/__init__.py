"""Operators by name: scripted baselines now; people and LLM agents register here later."""

from __future__ import annotations

from susbench.errors import SusbenchError
from susbench.operators.base import Limits, Operator, OperatorContext, OperatorFactory, OperatorResult
from susbench.operators.scripted import IdleOperator, ScriptedOperator

OPERATORS: dict[str, OperatorFactory] = {
    "naive": lambda seed: ScriptedOperator("naive", seed, "naive"),
    "careful": lambda seed: ScriptedOperator("careful", seed, "careful"),
    "random": lambda seed: ScriptedOperator("random", seed, None),
    "idle": IdleOperator,
}


def register_operator(name: str, factory: OperatorFactory) -> None:
    """Make an operator available to `susbench run --operator NAME`."""
    OPERATORS[name] = factory


def check_operator(name: str) -> str:
    if name not in OPERATORS:
        raise SusbenchError(f"unknown operator {name!r}; expected one of: {', '.join(sorted(OPERATORS))}")
    return name


def make_operator(name: str, seed: int) -> Operator:
    """A fresh operator for one episode, seeded by the episode."""
    return OPERATORS[check_operator(name)](seed)


__all__ = [
    "OPERATORS",
    "Limits",
    "Operator",
    "OperatorContext",
    "OperatorResult",
    "check_operator",
    "make_operator",
    "register_operator",
]
