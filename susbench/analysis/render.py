"""The reports as rich tables for a terminal or a CI log."""

from __future__ import annotations

from rich.console import Group as RenderGroup
from rich.console import RenderableType
from rich.text import Text

from susbench.analysis import tables
from susbench.analysis.compare import CompareReport
from susbench.analysis.drift import DriftReport
from susbench.analysis.model import ModelReport
from susbench.analysis.summary import AnalysisReport, GroupReport
from susbench.analysis.tables import Rows
from susbench.core.tables import FittedTable

MAX_TYPE_PAIRS_SHOWN = 12


def rich_table(rows: Rows, caption: str | None = None) -> FittedTable:
    """Columns when the cells fit the terminal side by side, else one record per row: never a cut cell."""
    return FittedTable(rows.headers, rows.rows, rows.title, caption, left=rows.left, bold_last=rows.total)


def model_blocks(model: ModelReport) -> list[RenderableType]:
    references = ", ".join(f"{factor}: {level}" for factor, level in model.references.items())
    header = Text(
        f"{model.estimator}: {model.formula}  ({model.exposures} exposures; reference {references or '—'})",
        style="bold",
    )
    types = [c for c in model.comparisons if c.factor == "pattern_type"]
    shown_types = types if len(types) <= MAX_TYPE_PAIRS_SHOWN else [c for c in types if c.p_holm < 0.05]
    shown = [c for c in model.comparisons if c.factor == "operator"] + shown_types
    hidden = len(types) - len(shown_types)
    caption = f"{hidden} other pairs of types: n.s. (all pairs in --json and --html)" if hidden else None
    blocks: list[RenderableType] = [
        header,
        rich_table(tables.terms(model)),
        rich_table(tables.coefficients(model)),
        rich_table(tables.comparisons(shown), caption),
    ]
    return blocks + [Text(f"note: {note}", style="yellow") for note in model.notes]


def render_group(report: GroupReport) -> RenderableType:
    runs = ", ".join(f"{run.run_id} ({run.operator}, seed {run.seed})" for run in report.runs)
    blocks: list[RenderableType] = [
        Text(f"Configuration: {report.label}", style="bold cyan"),
        Text(f"runs: {runs}", style="dim"),
        rich_table(tables.avoidance(report)),
        rich_table(tables.decided(report)),
        rich_table(tables.episodes(report)),
    ]
    if report.paired:
        blocks.append(rich_table(tables.paired(report)))
    if report.flips:
        blocks.append(rich_table(tables.flips(report)))
    if report.power:
        blocks.append(rich_table(tables.power(report)))
    if report.breakdown:
        blocks.append(rich_table(tables.breakdown(report)))
    if report.model is not None:
        blocks += model_blocks(report.model)
    elif report.model_note:
        blocks.append(Text(f"model: {report.model_note}", style="yellow"))
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


def render_compare(report: CompareReport) -> RenderableType:
    blocks: list[RenderableType] = [
        Text(f"A: {tables.side_label(report.first)}"),
        Text(f"B: {tables.side_label(report.second)}"),
        Text(tables.compare_summary(report), style="bold"),
        rich_table(tables.compare_types(report)),
    ]
    if report.flagged_tasks:
        blocks.append(rich_table(tables.flagged_tasks(report)))
    else:
        blocks.append(Text("No task differs between A and B.", style="green"))
    return RenderGroup(*blocks)


def render_drift(report: DriftReport) -> RenderableType:
    urls = report.urls
    anchors = rich_table(tables.anchors(report))
    verdict = (
        Text(f"anchors broke: {', '.join(report.flagged)}", style="bold red")
        if report.flagged
        else Text("every injection that anchored on A still anchors on B", style="green")
    )
    return RenderGroup(
        Text(f"A: {report.a.path} ({report.a.id}, {report.a.records} records)"),
        Text(f"B: {report.b.path} ({report.b.id}, {report.b.records} records)"),
        Text(
            f"URLs: {len(urls.added)} added, {len(urls.removed)} removed, {urls.common} on both "
            f"(paths: {len(urls.paths_added)} added, {len(urls.paths_removed)} removed)",
            style="bold",
        ),
        rich_table(tables.digests(report)),
        rich_table(tables.pages(report)),
        anchors,
        verdict,
    )
