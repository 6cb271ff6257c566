"""The report as rich tables for a terminal or a CI log: one block per configuration group."""

from __future__ import annotations

from rich.console import Group as RenderGroup
from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from susbench.analysis.compare import CompareReport, Side
from susbench.analysis.drift import DriftReport
from susbench.analysis.model import ModelReport
from susbench.analysis.summary import ALL, AnalysisReport, GroupReport, RateRow
from susbench.analysis.walk import AnchorObservation

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


def signed_percent(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:+.1f} pp"


def compare_type_table(report: CompareReport) -> Table:
    table = Table(
        title="Per type (pairs exposed on both sides for McNemar and the difference)", title_justify="left"
    )
    for column in (
        "pattern type",
        "pairs",
        "agreement",
        "A",
        "B",
        "B − A",
        "95% CI",
        "only A",
        "only B",
        "exposed on one side",
        "McNemar p",
    ):
        table.add_column(column, justify="left" if column == "pattern type" else "right")
    for row in (*report.by_type, report.overall):
        interval = (
            "—" if row.ci_low is None else f"[{signed_percent(row.ci_low)}, {signed_percent(row.ci_high)}]"
        )
        table.add_row(
            row.pattern_type,
            str(row.pairs),
            percent(row.agreement),
            percent(row.first_rate),
            percent(row.second_rate),
            signed_percent(row.difference),
            interval,
            str(row.only_first_avoided),
            str(row.only_second_avoided),
            str(row.exposure_discordant),
            "—" if row.mcnemar_p is None else p_value(row.mcnemar_p),
            style="bold" if row.pattern_type == ALL else None,
        )
    return table


def side_label(side: Side) -> str:
    where = f"{side.mode}, {side.snapshot_id}" if side.snapshot_id else side.mode
    return f"{side.run_id} ({side.operator}, {where})"


def compare_summary(report: CompareReport) -> str:
    text = f"{report.pairs} pairs; agreement {percent(report.agreement)}; {len(report.discordant)} discordant"
    if report.unpaired_first or report.unpaired_second:
        text += f"; unpaired: {report.unpaired_first} in A, {report.unpaired_second} in B"
    return text


def render_compare(report: CompareReport) -> RenderableType:
    blocks: list[RenderableType] = [
        Text(f"A: {side_label(report.first)}"),
        Text(f"B: {side_label(report.second)}"),
        Text(compare_summary(report), style="bold"),
        compare_type_table(report),
    ]
    if report.flagged_tasks:
        flagged = Table(title="Flagged tasks (outcomes differ between A and B)", title_justify="left")
        for column in ("task", "injection", "type", "discordant", "A -> B"):
            flagged.add_column(column)
        for task in report.flagged_tasks:
            flagged.add_row(
                task.task_id,
                task.injection_id or "control",
                task.pattern_type or "—",
                f"{task.discordant}/{task.pairs}",
                "; ".join(task.changes),
            )
        blocks.append(flagged)
    else:
        blocks.append(Text("No task differs between A and B.", style="green"))
    return RenderGroup(*blocks)


def _anchor_state(observation: AnchorObservation) -> str:
    if observation.status == "anchored":
        return "anchored" + (
            f" (locator {observation.locator + 1})" if observation.locator is not None else ""
        )
    return observation.status.replace("_", " ")


def anchor_rows(report: DriftReport) -> list[list[str]]:
    rows = []
    for anchor in report.anchors:
        verdict = "BROKE" if anchor.broke else "fallback" if anchor.fallback else "ok"
        rows.append(
            [
                anchor.injection_id,
                anchor.pattern_type,
                anchor.task_id,
                _anchor_state(anchor.a),
                _anchor_state(anchor.b),
                verdict,
            ]
        )
    return rows


def page_rows(report: DriftReport) -> list[list[str]]:
    rows = []
    for page in report.pages:
        url = page.url_a if page.url_a == page.url_b else f"{page.url_a} → {page.url_b}"
        pixels = "—" if page.pixels_changed is None else f"{100 * page.pixels_changed:.2f}%"
        rows.append(
            [page.task_id, str(page.index), url, str(page.text_lines_changed), pixels, page.problem or ""]
        )
    return rows


def render_drift(report: DriftReport) -> RenderableType:
    urls = report.urls
    blocks: list[RenderableType] = [
        Text(f"A: {report.a.path} ({report.a.id}, {report.a.records} records)"),
        Text(f"B: {report.b.path} ({report.b.id}, {report.b.records} records)"),
        Text(
            f"URLs: {len(urls.added)} added, {len(urls.removed)} removed, {urls.common} on both "
            f"(paths: {len(urls.paths_added)} added, {len(urls.paths_removed)} removed)",
            style="bold",
        ),
    ]
    digests = Table(title="Changed payloads among URLs on both sides", title_justify="left")
    for column in ("content type", "URLs on both", "changed"):
        digests.add_column(column, justify="left" if column == "content type" else "right")
    for row in report.digests:
        digests.add_row(row.family, str(row.common), str(row.changed))
    pages = Table(title=f"Task pages ({len(report.tasks)} tasks)", title_justify="left")
    for column in ("task", "n", "URL", "text lines changed", "pixels changed", "problem"):
        pages.add_column(
            column, justify="right" if column in ("n", "text lines changed", "pixels changed") else "left"
        )
    for row in page_rows(report):
        pages.add_row(*row)
    anchors = Table(title="Injection anchors (the extension's own matcher)", title_justify="left")
    for column in ("injection", "type", "task", "A", "B", ""):
        anchors.add_column(column)
    for row in anchor_rows(report):
        anchors.add_row(*row, style="bold red" if row[-1] == "BROKE" else None)
    summary = (
        Text(f"anchors broke: {', '.join(report.flagged)}", style="bold red")
        if report.flagged
        else Text("every injection that anchored on A still anchors on B", style="green")
    )
    return RenderGroup(*blocks, digests, pages, anchors, summary)
