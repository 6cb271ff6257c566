"""Avoidance rates by operator and pattern type with 95% Wilson intervals (the paper's Figure 4).

Avoidance = avoided / (avoided + not_avoided): an exposure that never happened (not_encountered),
one the page interfered with (tampered) or an episode that failed (error) says nothing about
susceptibility, so they are counted and shown but kept out of the rate. Wilson intervals stay inside
[0, 1] and behave at 0% and 100%, which scripted baselines and small cells produce.
"""

from __future__ import annotations

import math
from collections import defaultdict

from pydantic import Field
from rich.table import Table

from susbench.models import PATTERN_TYPES, Frozen, OutcomeKind
from susbench.store import Store

Z_95 = 1.959963984540054
ALL_TYPES = "all"


def wilson_interval(successes: int, trials: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion; (0, 1) when there are no trials."""
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


class ReportRow(Frozen):
    """One cell: an operator on one pattern type (or on all types pooled)."""

    operator: str
    pattern_type: str
    avoided: int = Field(ge=0)
    not_avoided: int = Field(ge=0)
    not_encountered: int = Field(ge=0)
    tampered: int = Field(ge=0)
    error: int = Field(ge=0)
    rate: float | None
    ci_low: float | None
    ci_high: float | None

    @classmethod
    def from_counts(cls, operator: str, pattern_type: str, counts: dict[str, int]) -> ReportRow:
        avoided = counts.get(OutcomeKind.AVOIDED, 0)
        exposed = avoided + counts.get(OutcomeKind.NOT_AVOIDED, 0)
        low, high = wilson_interval(avoided, exposed) if exposed else (None, None)
        return cls(
            operator=operator,
            pattern_type=pattern_type,
            avoided=avoided,
            not_avoided=counts.get(OutcomeKind.NOT_AVOIDED, 0),
            not_encountered=counts.get(OutcomeKind.NOT_ENCOUNTERED, 0),
            tampered=counts.get(OutcomeKind.TAMPERED, 0),
            error=counts.get(OutcomeKind.ERROR, 0),
            rate=avoided / exposed if exposed else None,
            ci_low=low,
            ci_high=high,
        )


class Report(Frozen):
    """Rows per operator × type, then one pooled row per operator; control episodes counted apart."""

    rows: tuple[ReportRow, ...]
    control_episodes: dict[str, int] = Field(default_factory=dict)


def build_report(store: Store, where: str = "") -> Report:
    """Aggregate `episode_outcomes`; `where` is an optional SQL filter over that view."""
    condition = f"WHERE {where}" if where else ""
    _, rows = store.query(
        "SELECT operator, pattern_type, outcome, count(*) FROM episode_outcomes "
        f"{condition} GROUP BY ALL ORDER BY ALL"
    )
    cells: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    control: dict[str, int] = defaultdict(int)
    for operator, pattern_type, outcome, count in rows:
        if pattern_type is None:
            control[operator] += count
            continue
        cells[(operator, pattern_type)][outcome] += count
        cells[(operator, ALL_TYPES)][outcome] += count
    order = {name: index for index, name in enumerate((*PATTERN_TYPES, ALL_TYPES))}
    keys = sorted(cells, key=lambda key: (key[0], order.get(key[1], len(order))))
    return Report(
        rows=tuple(ReportRow.from_counts(operator, kind, cells[(operator, kind)]) for operator, kind in keys),
        control_episodes=dict(control),
    )


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def render_report(report: Report, title: str = "Avoidance by operator and pattern type") -> Table:
    """A rich table; pooled rows in bold, interval as [low, high]."""
    table = Table(title=title, title_justify="left")
    table.add_column("operator")
    table.add_column("pattern type")
    table.add_column("avoidance", justify="right")
    table.add_column("95% CI (Wilson)", justify="right")
    table.add_column("avoided", justify="right")
    table.add_column("not avoided", justify="right")
    table.add_column("not encountered", justify="right")
    table.add_column("tampered", justify="right")
    table.add_column("error", justify="right")
    previous = None
    for row in report.rows:
        if previous is not None and previous != row.operator:
            table.add_section()
        previous = row.operator
        interval = "—" if row.ci_low is None else f"[{_percent(row.ci_low)}, {_percent(row.ci_high)}]"
        style = "bold" if row.pattern_type == ALL_TYPES else None
        table.add_row(
            row.operator,
            row.pattern_type,
            _percent(row.rate),
            interval,
            str(row.avoided),
            str(row.not_avoided),
            str(row.not_encountered),
            str(row.tampered),
            str(row.error),
            style=style,
        )
    if report.control_episodes:
        counts = ", ".join(
            f"{operator}: {count}" for operator, count in sorted(report.control_episodes.items())
        )
        table.caption = f"control episodes (no injection), not in the rates — {counts}"
    return table
