"""The reports' tables as plain rows of text, drawn by both the terminal and the HTML renderers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from susbench.analysis.compare import CompareReport, Side
from susbench.analysis.drift import DriftReport
from susbench.analysis.model import Comparison, ModelReport
from susbench.analysis.paired import MeanDifference
from susbench.analysis.summary import ALL, GroupReport, RateRow
from susbench.analysis.walk import AnchorObservation


@dataclass(frozen=True)
class Rows:
    """A table: its title, headers, rows; the first `left` columns are text, the rest numbers."""

    title: str
    headers: list[str]
    rows: list[list[str]]
    left: int = 1
    total: bool = False


def percent(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def signed_percent(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:+.1f} pp"


def p_value(value: float) -> str:
    return "<0.0001" if value < 0.0001 else f"{value:.4f}"


def number(value: float) -> str:
    """Three decimals, and never "-0.000"."""
    return f"{round(value, 3) + 0.0:.3f}"


def interval(low: float | None, high: float | None, show: Callable[[float | None], str] = percent) -> str:
    return "—" if low is None else f"[{show(low)}, {show(high)}]"


def rate_cell(row: RateRow | None) -> str:
    if row is None or row.rate is None:
        return "—"
    return f"{percent(row.rate)} {interval(row.ci_low, row.ci_high)} n={row.avoided + row.not_avoided}"


def avoidance(report: GroupReport) -> Rows:
    """Types down, operators across, all operators pooled last; the pooled row last."""
    operators = [*report.operators, ALL]
    return Rows(
        "Avoidance, 95% Wilson interval, n exposures",
        ["pattern type", *(operator if operator != ALL else "all operators" for operator in operators)],
        [
            [name, *(rate_cell(report.cell(operator, name)) for operator in operators)]
            for name in [*report.pattern_types, ALL]
        ],
        total=True,
    )


def control_cell(report: GroupReport, operator: str) -> str:
    """Control episodes, saying how many were a study's practice tasks."""
    controls = report.control_episodes.get(operator, 0)
    practice = report.practice_episodes.get(operator, 0)
    return f"{controls} ({practice} practice)" if practice else str(controls)


def episodes(report: GroupReport) -> Rows:
    rows = []
    for operator in report.operators:
        row = report.cell(operator, ALL)
        if row is None:
            continue
        completion = (
            "—"
            if row.completion_rate is None
            else f"{percent(row.completion_rate)} of {row.completion_checked}"
        )
        rows.append(
            [
                operator,
                str(row.episodes),
                str(row.avoided + row.not_avoided),
                str(row.not_encountered),
                str(row.tampered),
                str(row.error),
                str(row.decided_then_error),
                completion,
                control_cell(report, operator),
            ]
        )
    return Rows(
        "Episodes",
        [
            "operator",
            "injected",
            "exposed",
            "not encountered",
            "tampered",
            "error",
            "decided, then error",
            "completion",
            "control",
        ],
        rows,
    )


def breakdown(report: GroupReport) -> Rows:
    headers = [
        "operator",
        "pattern type",
        str(report.breakdown_by),
        "avoidance",
        "95% CI",
        "avoided",
        "not avoided",
        "not encountered",
        "tampered",
        "error",
    ]
    rows = [
        [
            row.operator,
            row.pattern_type,
            row.item or "",
            percent(row.rate),
            interval(row.ci_low, row.ci_high),
            str(row.avoided),
            str(row.not_avoided),
            str(row.not_encountered),
            str(row.tampered),
            str(row.error),
        ]
        for row in report.breakdown
    ]
    return Rows("Breakdown", headers, rows, left=3)


def _how(counts: dict[str, int]) -> str:
    return " · ".join(f"{name.replace('_', ' ')} {count}" for name, count in counts.items()) or "—"


def decided(report: GroupReport) -> Rows:
    """How each exposure was decided, the paper's avoidance beside engaged avoidance, and completion."""
    rows = []
    for row in report.rows:
        if row.exposures == 0 and row.completion_checked == 0:
            continue
        not_avoided = {name: row.decided_by[name] - row.avoided_by.get(name, 0) for name in row.decided_by}
        rows.append(
            [
                row.operator if row.operator != ALL else "all operators",
                row.pattern_type,
                _how(row.avoided_by),
                _how({name: count for name, count in not_avoided.items() if count}),
                rate_cell(row),
                "—"
                if row.engaged_rate is None
                else f"{percent(row.engaged_rate)} {interval(row.engaged_ci_low, row.engaged_ci_high)} "
                f"n={row.engaged}",
                "—"
                if row.completion_rate is None
                else f"{percent(row.completion_rate)} of {row.completion_checked}",
            ]
        )
    return Rows(
        "How each exposure was decided; engaged avoidance counts only chose and moved on",
        [
            "operator",
            "pattern type",
            "avoided by",
            "not avoided by",
            "avoidance (paper)",
            "engaged avoidance",
            "completion",
        ],
        rows,
        left=4,
    )


def _mean_cell(found: MeanDifference | None, unit: str) -> str:
    if found is None:
        return "—"
    spread = "" if found.ci_low is None else f" [{found.ci_low:+.1f}, {found.ci_high:+.1f}]"
    return f"{found.with_pattern:.1f} vs {found.without:.1f} {unit}: {found.difference:+.1f}{spread}"


def paired(report: GroupReport) -> Rows:
    """Injected episodes beside their paired controls (run with --control paired)."""
    rows = [
        [
            row.operator if row.operator != ALL else "all operators",
            row.pattern_type,
            str(row.pairs),
            "—"
            if row.completion_difference is None
            else f"{row.completed_with} vs {row.completed_without} of {row.completion_pairs}",
            "—"
            if row.completion_difference is None
            else f"{signed_percent(row.completion_difference)} "
            f"{interval(row.completion_ci_low, row.completion_ci_high, signed_percent)}",
            "—" if row.mcnemar_p is None else p_value(row.mcnemar_p),
            _mean_cell(row.steps, "steps"),
            _mean_cell(row.seconds, "s"),
        ]
        for row in report.paired
    ]
    headers = [
        "operator",
        "pattern type",
        "pairs",
        "completed with vs without",
        "difference, 95% Newcombe",
        "McNemar p",
        "steps, difference [95% t]",
        "time, difference [95% t]",
    ]
    return Rows("With and without the pattern (paired controls)", headers, rows, left=2)


def flips(report: GroupReport) -> Rows:
    """Replicates of one (task, injection) whose outcomes differ; each operator's total first."""
    ordered = sorted(report.flips, key=lambda row: (row.operator, row.task_id is not None, row.task_id or ""))
    rows = [
        [
            row.operator,
            row.task_id or "all (task, injection)s",
            row.injection_id or "",
            str(row.replicates),
            f"{row.differing} of {row.pairs}",
            percent(row.flip_rate),
            _how(row.outcomes),
        ]
        for row in ordered
    ]
    headers = ["operator", "task", "injection", "replicates", "pairs that differ", "flip rate", "outcomes"]
    return Rows("Replicates: how often the outcome flips between identical runs", headers, rows, left=3)


def power(report: GroupReport) -> Rows:
    rows = [
        [
            row.pattern_type,
            str(row.exposures),
            percent(row.rate),
            "—" if row.interval_width is None else f"{100 * row.interval_width:.0f} pp",
            "none" if row.detectable is None else f"{100 * row.detectable:.0f} pp",
        ]
        for row in report.power
    ]
    headers = ["pattern type", "n exposures", "avoidance", "95% interval width", "detectable difference"]
    return Rows(
        "Power: the smallest difference from another type (same n) detectable at α 0.05 with 80% power",
        headers,
        rows,
    )


def terms(model: ModelReport) -> Rows:
    rows = [[term.term, str(term.df), number(term.chi2), p_value(term.p_value)] for term in model.terms]
    return Rows("Penalized LR test of each term", ["term", "df", "χ²", "p"], rows)


def coefficients(model: ModelReport) -> Rows:
    rows = [
        [c.term, c.level, number(c.estimate), f"{c.odds_ratio:.3g}", number(c.chi2), p_value(c.p_value)]
        for c in model.coefficients
    ]
    return Rows(
        "Coefficients (log odds of avoiding)",
        ["term", "level", "estimate", "odds ratio", "χ²", "p"],
        rows,
        left=2,
    )


def comparisons(found: list[Comparison]) -> Rows:
    rows = [
        [
            c.factor,
            f"{c.second} vs {c.first}",
            number(c.log_odds_ratio),
            number(c.chi2),
            p_value(c.p_value),
            p_value(c.p_holm),
            c.label,
        ]
        for c in found
    ]
    headers = ["factor", "pair", "log OR", "χ²", "p", "p (Holm)", ""]
    return Rows("Pairwise comparisons (Holm-adjusted within each factor)", headers, rows, left=2)


def side_label(side: Side) -> str:
    where = f"{side.mode}, {side.snapshot_id}" if side.snapshot_id else side.mode
    return f"{side.run_id} ({side.operator}, {where})"


def compare_summary(report: CompareReport) -> str:
    text = f"{report.pairs} pairs; agreement {percent(report.agreement)}; {len(report.discordant)} discordant"
    if report.unpaired_first or report.unpaired_second:
        text += f"; unpaired: {report.unpaired_first} in A, {report.unpaired_second} in B"
    return text


def compare_types(report: CompareReport) -> Rows:
    headers = [
        "pattern type",
        "pairs",
        "agreement",
        "A",
        "B",
        "B − A",
        "95% CI",
        "only A avoided",
        "only B avoided",
        "exposed on one side",
        "McNemar exact p",
    ]
    rows = [
        [
            row.pattern_type,
            str(row.pairs),
            percent(row.agreement),
            percent(row.first_rate),
            percent(row.second_rate),
            signed_percent(row.difference),
            interval(row.ci_low, row.ci_high, signed_percent),
            str(row.only_first_avoided),
            str(row.only_second_avoided),
            str(row.exposure_discordant),
            "—" if row.mcnemar_p is None else p_value(row.mcnemar_p),
        ]
        for row in (*report.by_type, report.overall)
    ]
    return Rows(
        "Per type (McNemar and the difference use the pairs exposed on both sides)", headers, rows, total=True
    )


def flagged_tasks(report: CompareReport) -> Rows:
    rows = [
        [
            task.task_id,
            task.injection_id or "control",
            task.pattern_type or "—",
            f"{task.discordant}/{task.pairs}",
            "; ".join(task.changes),
        ]
        for task in report.flagged_tasks
    ]
    return Rows(
        "Flagged tasks (outcomes differ between A and B)",
        ["task", "injection", "type", "discordant", "A -> B"],
        rows,
        left=5,
    )


def discordant_pairs(report: CompareReport) -> Rows:
    rows = [
        [
            p.task_id,
            p.injection_id or "control",
            p.operator,
            str(p.repeat),
            str(p.seed),
            f"{p.first.value} ({p.first_reason})",
            f"{p.second.value} ({p.second_reason})",
        ]
        for p in report.discordant
    ]
    return Rows(
        "Discordant pairs", ["task", "injection", "operator", "repeat", "seed", "A", "B"], rows, left=7
    )


def anchor_state(observation: AnchorObservation) -> str:
    if observation.status == "anchored":
        return "anchored" + (
            f" (locator {observation.locator + 1})" if observation.locator is not None else ""
        )
    return observation.status.replace("_", " ")


def anchors(report: DriftReport) -> Rows:
    rows = []
    for anchor in report.anchors:
        verdict = "BROKE" if anchor.broke else "fallback" if anchor.fallback else "ok"
        rows.append(
            [
                anchor.injection_id,
                anchor.pattern_type,
                anchor.task_id,
                anchor_state(anchor.a),
                anchor_state(anchor.b),
                verdict,
            ]
        )
    return Rows(
        "Injection anchors (the extension's own matcher)",
        ["injection", "type", "task", "A", "B", "verdict"],
        rows,
        left=6,
    )


def pages(report: DriftReport) -> Rows:
    rows = []
    for page in report.pages:
        url = page.url_a if page.url_a == page.url_b else f"{page.url_a} → {page.url_b}"
        pixels = "—" if page.pixels_changed is None else f"{100 * page.pixels_changed:.2f}%"
        rows.append(
            [page.task_id, str(page.index), url, str(page.text_lines_changed), pixels, page.problem or ""]
        )
    headers = ["task", "n", "URL", "text lines changed", "pixels changed", "problem"]
    return Rows(f"Task pages ({len(report.tasks)} tasks)", headers, rows, left=3)


def digests(report: DriftReport) -> Rows:
    rows = [[d.family, str(d.common), str(d.changed)] for d in report.digests]
    return Rows(
        "Changed payloads among URLs on both sides", ["content type", "URLs on both", "changed"], rows
    )
