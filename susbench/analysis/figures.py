"""The paper's Figure 4 from a group report: avoidance (a) by operator, (b) by type, (c) by type per operator.

Bars are avoidance rates with 95% Wilson intervals as error bars. Where every exposure says how it
was decided, the bars count engaged avoidance (exposures decided by choosing on the pattern or moving
on along the task's flow) and a hollow diamond marks avoidance as the paper counts it (walking away
and running out of budget included), so an operator that avoids by leaving cannot look resistant;
runs stored before decided-by get the paper's avoidance. Brackets carry the Holm-adjusted penalized
likelihood-ratio tests of the model (***, **, *, n.s.), each label on its own bracket line: every pair
of operators in (a), neighbouring types in (b), in the order of their avoidance (all pairs of types
would be 36 brackets for nine types; every pair is in the report's comparisons table). Panel (b)
pools the operators under test, never the careful and naive baselines (opposite policies). Each
bar's foot gives its n. Files are PNG, SVG and PDF with fixed metadata, so the same results give the
same bytes; `caption(report)` is the figure's caption (also written beside it as `<stem>.txt`).
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

from matplotlib import rc_context
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from susbench.analysis.model import Comparison
from susbench.analysis.summary import ALL, AnalysisReport, GroupReport, RateRow
from susbench.core.errors import SusbenchError

PALETTE = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c")
POOLED_COLOUR = "#6b7b8c"
FORMATS = ("png", "svg", "pdf")
METADATA = {"png": {"Software": None}, "svg": {"Date": None}, "pdf": {"CreationDate": None, "Producer": None}}
MAX_OPERATOR_BRACKETS = 6
BRACKET_STEP = 0.09
ZERO_STUB = 0.008  # height at which a 0% bar is drawn as a line, so it does not vanish into the axis
N_SIZE = 8  # points: the n under each bar, readable at print size
LABEL_WIDTH = 16  # characters per line of a tick label (wrapped, never slanted into the next panel)

STYLE = {"svg.hashsalt": "susbench", "font.family": "DejaVu Sans", "font.size": 9, "pdf.fonttype": 42}


def type_title(name: str) -> str:
    return "Pop-Up Ad" if name == "popup_ad" else name.replace("_", " ").title()


def counts_engaged(report: GroupReport) -> bool:
    """Whether the figure draws engaged avoidance: every exposure of the group says how it was decided."""
    exposed = [row for row in report.rows if row.exposures]
    return bool(exposed) and all(row.classified for row in exposed)


def _shown(row: RateRow, engaged: bool) -> tuple[float | None, float | None, float | None, int]:
    """The rate drawn, its interval and its n."""
    if engaged:
        return row.engaged_rate, row.engaged_ci_low, row.engaged_ci_high, row.engaged
    return row.rate, row.ci_low, row.ci_high, row.exposures


def _no_bar(row: RateRow | None, engaged: bool, compact: bool) -> str:
    """What stands where no bar can: a dash for a cell with no exposure; under engaged avoidance, for a
    subject whose every exposure was decided by leaving or running out, how they were decided, so the
    picture itself says it walked away (the demo's model: n=0, left 5)."""
    if compact or row is None or not engaged or not row.exposures:
        return "–"
    walked = ", ".join(f"{way.replace('_', ' ')} {count}" for way, count in sorted(row.decided_by.items()))
    return f"n=0\n{walked}"


def _bars(
    axes: Axes,
    positions: list[float],
    rows: list[RateRow | None],
    width: float,
    colour: str,
    engaged: bool,
    compact: bool = False,
) -> None:
    """Bars at `positions` with asymmetric Wilson error bars, the paper's avoidance as a hollow diamond
    where it differs from the bar's, and at each bar's foot its n (with the rate above it unless
    `compact`), on an opaque box over the whisker; an empty cell gets a dash."""
    for position, row in zip(positions, rows, strict=True):
        rate, low, high, n = (None, None, None, 0) if row is None else _shown(row, engaged)
        if row is not None and engaged and row.rate is not None and row.rate != row.engaged_rate:
            axes.plot(position, row.rate, "D", mfc="none", mec="#222222", ms=4.5 if compact else 6, zorder=5)
        if rate is None or low is None or high is None:
            label = _no_bar(row, engaged, compact)
            axes.text(position, 0.02, label, ha="center", va="bottom", fontsize=N_SIZE, color="#666666")
            continue
        axes.bar(position, rate, width=width, color=colour, edgecolor="white", linewidth=0.6)
        # a 0% bar has no height: a stub in its colour, just above the axis, shows it is there
        axes.hlines(
            max(rate, ZERO_STUB), position - width / 2, position + width / 2, colors=colour, lw=3, zorder=3
        )
        axes.errorbar(
            position,
            rate,
            yerr=[[rate - low], [high - rate]],
            fmt="none",
            ecolor="#222222",
            elinewidth=0.9,
            capsize=2.5,
            zorder=2,
        )
        box = {"facecolor": "white", "edgecolor": "none", "pad": 0.6}
        label = f"{n}" if compact else f"{100 * rate:.0f}%\nn={n}"
        axes.text(
            position,
            0.025,
            label,
            ha="center",
            va="bottom",
            fontsize=N_SIZE,
            bbox=box,
            zorder=6,
        )


def _bracket(axes: Axes, left: float, right: float, height: float, label: str) -> None:
    """A bracket whose label sits on its own line, on an opaque box: no label meets another bracket."""
    tick = 0.02
    axes.plot(
        [left, left, right, right], [height - tick, height, height, height - tick], color="#222222", lw=0.8
    )
    box = {"facecolor": "white", "edgecolor": "none", "pad": 0.4}
    axes.text((left + right) / 2, height, label, ha="center", va="center", fontsize=7.5, bbox=box, zorder=4)


def _find(comparisons: list[Comparison], factor: str, first: str, second: str) -> Comparison | None:
    for comparison in comparisons:
        if comparison.factor == factor and {comparison.first, comparison.second} == {first, second}:
            return comparison
    return None


def _wrapped(label: str, width: int = LABEL_WIDTH) -> str:
    return "\n".join(textwrap.wrap(label, width, break_long_words=False)) or label


def _style(axes: Axes, title: str, labels: list[str], top: float, engaged: bool) -> None:
    axes.set_title(title, loc="left", fontsize=10, fontweight="bold")
    axes.set_ylim(0, top)
    axes.set_yticks([0, 0.25, 0.5, 0.75, 1.0], ["0%", "25%", "50%", "75%", "100%"])
    axes.set_ylabel("engaged avoidance" if engaged else "avoidance rate")
    crowded = len(labels) > 6  # nine types: a word a line, so neighbours never run together
    axes.set_xticks(
        range(len(labels)), [_wrapped(label, 9 if crowded else LABEL_WIDTH) for label in labels], fontsize=8
    )
    axes.spines[["top", "right"]].set_visible(False)
    axes.grid(axis="y", color="#e5e5e5", linewidth=0.6)
    axes.set_axisbelow(True)


def _operator_colours(report: GroupReport) -> dict[str, str]:
    return {operator: PALETTE[index % len(PALETTE)] for index, operator in enumerate(report.operators)}


def type_order(report: GroupReport) -> list[str]:
    """Types from most to least avoided (pooled over operators); types without exposures last."""

    def rate(name: str) -> float:
        row = report.cell(ALL, name)
        return -1.0 if row is None or row.rate is None else row.rate

    return sorted(report.pattern_types, key=lambda name: -rate(name))


def panel_by_operator(axes: Axes, report: GroupReport) -> None:
    operators = report.operators
    colours = _operator_colours(report)
    engaged = counts_engaged(report)
    for index, operator in enumerate(operators):
        _bars(axes, [index], [report.cell(operator, ALL)], 0.6, colours[operator], engaged)
    comparisons = list(report.model.comparisons) if report.model else []
    height = 1.07
    if len(operators) <= MAX_OPERATOR_BRACKETS:
        pairs = sorted(
            ((a, b) for a in range(len(operators)) for b in range(a + 1, len(operators))),
            key=lambda p: (p[1] - p[0], p[0]),
        )
        for left, right in pairs:
            found = _find(comparisons, "operator", operators[left], operators[right])
            if found is not None:
                _bracket(axes, left, right, height, found.label)
                height += BRACKET_STEP
    axes.set_xlim(-0.6, len(operators) - 0.4)
    _style(axes, "(a) by operator", operators, max(1.12, height), engaged)


def panel_by_type(axes: Axes, report: GroupReport) -> None:
    order = type_order(report)
    engaged = counts_engaged(report)
    pooled = report.under_test
    rows = [
        next((row for row in report.by_type_under_test if row.pattern_type == name), None) for name in order
    ]
    _bars(axes, list(range(len(order))), rows, 0.65, POOLED_COLOUR, engaged)
    comparisons = list(report.model.comparisons) if report.model else []
    for index in range(len(order) - 1):
        found = _find(comparisons, "pattern_type", order[index], order[index + 1])
        if found is not None:
            _bracket(axes, index + 0.08, index + 0.92, 1.07 + BRACKET_STEP * (index % 2), found.label)
    if not pooled:
        axes.text(
            0.5,
            0.5,
            "only the careful and naive baselines ran:\ntheir opposite policies are not pooled",
            transform=axes.transAxes,
            ha="center",
            va="center",
            fontsize=8,
            color="#555555",
        )
    who = ", ".join(pooled) if pooled else "no operator under test"
    title = "(b) by type, pooled over\n" + textwrap.fill(who, 48)
    _style(axes, title, [type_title(name) for name in order], 1.25, engaged)


def panel_by_type_and_operator(axes: Axes, report: GroupReport) -> None:
    order = type_order(report)
    operators = report.operators
    colours = _operator_colours(report)
    engaged = counts_engaged(report)
    width = 0.8 / max(1, len(operators))
    for index, operator in enumerate(operators):
        offset = (index - (len(operators) - 1) / 2) * width
        positions = [position + offset for position in range(len(order))]
        rows = [report.cell(operator, name) for name in order]
        _bars(axes, positions, rows, width * 0.92, colours[operator], engaged, compact=True)
    _style(axes, "(c) by type for each operator", [type_title(name) for name in order], 1.3, engaged)
    handles: list[Patch | Line2D] = [Patch(color=colours[operator], label=operator) for operator in operators]
    if engaged:
        handles.append(
            Line2D([], [], ls="none", marker="D", mfc="none", mec="#222222", label="as the paper counts")
        )
    axes.legend(handles=handles, frameon=False, fontsize=8, loc="upper center", ncol=min(len(handles), 5))


PANELS = {"a": panel_by_operator, "b": panel_by_type, "c": panel_by_type_and_operator}


def caption(report: GroupReport) -> str:
    """What the figure shows: which avoidance, the interval method, the tests, and who avoided by leaving."""
    engaged = counts_engaged(report)
    counted = (
        "Bars: engaged avoidance, avoided / (avoided + not avoided) over the exposures the subject decided "
        "by choosing on the pattern or moving on along the task's flow; exposures decided by leaving the "
        "flow (a page outside it, another site, a page not in the snapshot) or by the step or time budget "
        "running out are not counted. Hollow diamonds, where it differs: avoidance as the paper counts "
        "it, every decided exposure included."
        if engaged
        else "Bars: avoidance as the paper counts it, avoided / (avoided + not avoided) over every decided "
        "exposure (these runs do not record how each exposure was decided)."
    )
    leaving = [
        f"{row.operator} ({row.avoided - row.engaged_avoided} of {row.avoided} avoided)"
        for operator in report.operators
        if (row := report.cell(operator, ALL)) is not None and row.mostly_left
    ]
    pooled = report.under_test
    parts = [
        counted,
        "Error bars: 95% Wilson score intervals; the number at a bar's foot is its n (the exposures "
        "counted); a 0% bar is drawn as a line on the axis.",
        "Brackets: Holm-adjusted penalized (Firth) likelihood-ratio tests of the main-effects model "
        "(*** p<0.001, ** p<0.01, * p<0.05, n.s.), between every pair of operators in (a) and between "
        "neighbouring types in (b), ordered by avoidance (the model's type effects, adjusted for operator, "
        "over every operator); the model counts avoidance as the paper does.",
        "(b) pools "
        + (", ".join(pooled) if pooled else "no operator")
        + "; the careful and naive baselines are never pooled (opposite policies).",
    ]
    if leaving:
        parts.append("Mostly avoided by leaving the task or running out: " + "; ".join(leaving) + ".")
    return " ".join(parts)


def figure4(report: GroupReport) -> Figure:
    """The three panels side by side, panel (c) the widest."""
    figure = Figure(figsize=(21, 5.4), layout="constrained")
    axes = figure.subplots(1, 3, width_ratios=[max(2, 1.3 * len(report.operators)), 7.5, 10])
    for panel, draw in zip(axes, PANELS.values(), strict=True):
        draw(panel, report)
    figure.suptitle(report.label, x=0.01, ha="left", fontsize=8, color="#555555")
    return figure


def panel_figure(report: GroupReport, panel: str) -> Figure:
    widths = {"a": 2.0 + 1.2 * len(report.operators), "b": 8.5, "c": 11.0}
    figure = Figure(figsize=(widths[panel], 4.8), layout="constrained")
    axes = figure.subplots()
    PANELS[panel](axes, report)
    return figure


def _save(figure: Figure, stem: Path) -> list[Path]:
    written = []
    for extension in FORMATS:
        path = stem.with_suffix(f".{extension}")
        figure.savefig(path, dpi=150, metadata=METADATA[extension])
        written.append(path)
    return written


def write_figures(report: GroupReport, folder: Path, prefix: str = "figure4") -> list[Path]:
    """<prefix>.{png,svg,pdf} (three panels), <prefix>-a/-b/-c.{png,svg,pdf} and the caption
    <prefix>.txt; returns the files written."""
    if not report.rows:
        raise SusbenchError(f"{report.label}: no injected episodes, so nothing to plot")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SusbenchError(f"{folder}: cannot create the figures folder: {exc}") from None
    with rc_context(STYLE):
        written = _save(figure4(report), folder / prefix)
        for panel in PANELS:
            written += _save(panel_figure(report, panel), folder / f"{prefix}-{panel}")
    text = folder / f"{prefix}.txt"
    text.write_text(caption(report) + "\n", encoding="utf-8")
    return [*written, text]


def figure_stem(group: GroupReport, index: int) -> str:
    """Every group's figure named alike, by its place and configuration, e.g.
    `figure4-1-snapshot-localweb-2026-11-29` or `figure4-2-live-2027-02-01`."""
    key = group.configuration
    parts = [str(key.get("mode", "pooled"))]
    if key.get("snapshot_sha256"):
        parts += sorted({run.snapshot_id for run in group.runs if run.snapshot_id}) or ["unknown"]
    if key.get("live_date"):
        parts.append(str(key["live_date"]))
    slug = re.sub(r"[^A-Za-z0-9.]+", "-", "-".join(parts)).strip("-")
    return f"figure4-{index}-{slug}"


def write_group_figures(report: AnalysisReport, folder: Path) -> list[Path]:
    """Figure 4 of every configuration group with injected episodes, named by `figure_stem`."""
    written = []
    for index, group in enumerate(report.groups, start=1):
        if group.rows:
            written += write_figures(group, folder, figure_stem(group, index))
    return written


def difference_figure(rows: list[tuple[str, float | None, float | None, float | None]], title: str) -> Figure:
    """A forest plot: one line per type, the paired difference in avoidance with its interval."""
    figure = Figure(figsize=(7, 0.45 * len(rows) + 1.4))
    axes = figure.subplots()
    for index, (name, estimate, low, high) in enumerate(reversed(rows)):
        if estimate is None or low is None or high is None:
            axes.text(
                0, index, "no pairs exposed on both sides", ha="center", va="center", fontsize=7, color="#666"
            )
            continue
        axes.plot([low, high], [index, index], color="#222222", lw=1.2)
        axes.plot([estimate], [index], "o", color=PALETTE[0] if name != "all" else "#222222", ms=5)
    axes.axvline(0, color="#999999", lw=0.8, ls="--")
    axes.set_yticks(
        range(len(rows)), [type_title(name) if name != "all" else "all types" for name, *_ in reversed(rows)]
    )
    axes.set_xlim(-1.05, 1.05)
    axes.set_xticks([-1, -0.5, 0, 0.5, 1], ["−100", "−50", "0", "+50", "+100"])
    axes.set_xlabel("B − A avoidance (percentage points), 95% Newcombe interval")
    axes.set_title(title, loc="left", fontsize=9)
    axes.spines[["top", "right"]].set_visible(False)
    figure.tight_layout()
    return figure
