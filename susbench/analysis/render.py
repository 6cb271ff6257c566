"""The report as rich tables for a terminal or a CI log: one block per configuration group."""

from __future__ import annotations

from rich.console import Group as RenderGroup
from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from susbench.analysis.model import ModelReport
from susbench.analysis.summary import ALL, AnalysisReport, GroupReport, RateRow

MAX_TYPE_PAIRS_SHOWN = 12


def percent(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def p_value(value: float) -> str:
    return "<0.0001" if value < 0.0001 else f"{value:.4f}"


def rate_cell(row: RateRow | None) -> str:
    if row is None or row.rate is None:
        return "—"
    exposed = row.avoided + row.not_avoided
    return f"{percent(row.rate)} [{percent(row.ci_low)}, {percent(row.ci_high)}] n={exposed}"


def avoidance_table(report: GroupReport) -> Table:
    """Types down, operators across (all operators pooled last); the pooled row in bold."""
    operators = [*report.operators, ALL]
    table = Table(title="Avoidance, 95% Wilson interval, n exposures", title_justify="left")
    table.add_column("pattern type")
    for operator in operators:
        table.add_column(operator if operator != ALL else "all operators", justify="right")
    for pattern_type in [*report.pattern_types, ALL]:
        style = "bold" if pattern_type == ALL else None
        table.add_row(
            pattern_type,
            *(rate_cell(report.cell(operator, pattern_type)) for operator in operators),
            style=style,
        )
    return table


def episodes_table(report: GroupReport) -> Table:
    table = Table(title="Episodes", title_justify="left")
    for column in ("operator", "injected", "exposed", "not encountered", "error", "completion", "control"):
        table.add_column(column, justify="left" if column == "operator" else "right")
    for operator in report.operators:
        row = report.cell(operator, ALL)
        if row is None:
            continue
        completion = (
            "—"
            if row.completion_rate is None
            else f"{percent(row.completion_rate)} of {row.completion_checked}"
        )
        table.add_row(
            operator,
            str(row.episodes),
            str(row.avoided + row.not_avoided),
            str(row.not_encountered),
            str(row.error),
            completion,
            str(report.control_episodes.get(operator, 0)),
        )
    return table


def breakdown_table(report: GroupReport) -> Table:
    table = Table(title="Breakdown", title_justify="left")
    for column in (
        "operator",
        "pattern type",
        "item",
        "avoidance",
        "95% CI",
        "avoided",
        "not avoided",
        "not enc.",
        "error",
    ):
        table.add_column(
            column, justify="right" if column not in ("operator", "pattern type", "item") else "left"
        )
    for row in report.breakdown:
        interval = "—" if row.ci_low is None else f"[{percent(row.ci_low)}, {percent(row.ci_high)}]"
        table.add_row(
            row.operator,
            row.pattern_type,
            row.item or "",
            percent(row.rate),
            interval,
            str(row.avoided),
            str(row.not_avoided),
            str(row.not_encountered),
            str(row.error),
        )
    return table


def model_tables(model: ModelReport) -> list[RenderableType]:
    references = ", ".join(f"{factor}: {level}" for factor, level in model.references.items())
    header = Text(
        f"Firth logistic regression: {model.formula}  "
        f"({model.exposures} exposures; reference {references or '—'})",
        style="bold",
    )
    terms = Table(title="Penalized likelihood-ratio tests of each term", title_justify="left")
    for column in ("term", "df", "χ²", "p"):
        terms.add_column(column, justify="left" if column == "term" else "right")
    for term in model.terms:
        terms.add_row(term.term, str(term.df), f"{term.chi2:.3f}", p_value(term.p_value))
    coefficients = Table(title="Coefficients (log odds of avoiding)", title_justify="left")
    for column in ("term", "level", "estimate", "odds ratio", "χ²", "p"):
        coefficients.add_column(column, justify="left" if column in ("term", "level") else "right")
    for coefficient in model.coefficients:
        coefficients.add_row(
            coefficient.term,
            coefficient.level,
            f"{coefficient.estimate:.3f}",
            f"{coefficient.odds_ratio:.3g}",
            f"{coefficient.chi2:.3f}",
            p_value(coefficient.p_value),
        )
    pairs = Table(title="Pairwise comparisons (Holm-adjusted within each factor)", title_justify="left")
    for column in ("factor", "pair", "log OR", "p", "p (Holm)", ""):
        pairs.add_column(column, justify="left" if column in ("factor", "pair", "") else "right")
    shown = [c for c in model.comparisons if c.factor == "operator"]
    types = [c for c in model.comparisons if c.factor == "pattern_type"]
    significant = [c for c in types if c.p_holm < 0.05]
    shown += types if len(types) <= MAX_TYPE_PAIRS_SHOWN else significant
    for comparison in shown:
        pairs.add_row(
            comparison.factor,
            f"{comparison.second} vs {comparison.first}",
            f"{comparison.log_odds_ratio:.3f}",
            p_value(comparison.p_value),
            p_value(comparison.p_holm),
            comparison.label,
        )
    hidden = len(types) - len(significant)
    if len(types) > MAX_TYPE_PAIRS_SHOWN and hidden:
        pairs.caption = f"{hidden} other pairs of types: n.s. (all pairs in --json and --html)"
    blocks: list[RenderableType] = [header, terms, coefficients, pairs]
    blocks += [Text(f"note: {note}", style="yellow") for note in model.notes]
    return blocks


def render_group(report: GroupReport) -> RenderableType:
    runs = ", ".join(f"{run.run_id} ({run.operator}, seed {run.seed})" for run in report.runs)
    blocks: list[RenderableType] = [
        Text(f"Configuration: {report.label}", style="bold cyan"),
        Text(f"runs: {runs}", style="dim"),
        avoidance_table(report),
        episodes_table(report),
    ]
    if report.breakdown:
        blocks.append(breakdown_table(report))
    if report.model is not None:
        blocks += model_tables(report.model)
    return RenderGroup(*blocks)


def render_analysis(report: AnalysisReport) -> RenderableType:
    if not report.groups:
        return Text(f"{report.database}: no episodes stored", style="yellow")
    blocks: list[RenderableType] = []
    if len(report.groups) > 1:
        blocks.append(
            Text(
                f"{len(report.groups)} run configurations differ, so they are reported apart "
                "(--pool to pool them anyway)",
                style="yellow",
            )
        )
    for group in report.groups:
        blocks += [render_group(group), Text("")]
    return RenderGroup(*blocks)
