"""The paper's Figure 4 from a group report: avoidance (a) by operator, (b) by type, (c) by type per operator.

Bars are avoidance rates with 95% Wilson intervals as error bars; brackets carry the Holm-adjusted
penalized likelihood-ratio tests of the model (***, **, *, n.s.): every pair of operators in (a),
neighbouring types in (b), in the order of their avoidance (all pairs of types would be 36
brackets for nine types; every pair is in the report's comparisons table). Each bar's foot gives its
exposures n. Files are written as PNG and SVG with fixed metadata, so the same
results give the same bytes.
"""

from __future__ import annotations

import re
from pathlib import Path

from matplotlib import rc_context
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from susbench.analysis.model import Comparison
from susbench.analysis.summary import ALL, AnalysisReport, GroupReport, RateRow
from susbench.core.errors import SusbenchError

PALETTE = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c")
POOLED_COLOUR = "#6b7b8c"
FORMATS = ("png", "svg")
MAX_OPERATOR_BRACKETS = 6
BRACKET_STEP = 0.075
ZERO_STUB = 0.008  # height at which a 0% bar is drawn as a line, so it does not vanish into the axis

STYLE = {"svg.hashsalt": "susbench", "font.family": "DejaVu Sans", "font.size": 9}


def type_title(name: str) -> str:
    return "Pop-Up Ad" if name == "popup_ad" else name.replace("_", " ").title()


def _bars(
    axes: Axes,
    positions: list[float],
    rows: list[RateRow | None],
    width: float,
    colour: str,
    values: bool = True,
) -> None:
    """Bars at `positions` with asymmetric Wilson error bars, and at each bar's foot its exposures n
    (with the rate above it when `values`); an empty cell gets a dash."""
    for position, row in zip(positions, rows, strict=True):
        if row is None or row.rate is None:
            axes.text(position, 0.02, "–", ha="center", va="bottom", color="#666666")
            continue
        assert row.ci_low is not None and row.ci_high is not None
        axes.bar(position, row.rate, width=width, color=colour, edgecolor="white", linewidth=0.6)
        # a 0% bar has no height: a stub in its colour, just above the axis, shows it is there
        stub = max(row.rate, ZERO_STUB)
        axes.hlines(stub, position - width / 2, position + width / 2, colors=colour, linewidth=3, zorder=3)
        axes.errorbar(
            position,
            row.rate,
            yerr=[[row.rate - row.ci_low], [row.ci_high - row.rate]],
            fmt="none",
            ecolor="#222222",
            elinewidth=0.9,
            capsize=2.5,
        )
        exposures = row.avoided + row.not_avoided
        box = {"facecolor": "white", "edgecolor": "none", "alpha": 0.85, "pad": 0.8}
        label = f"{100 * row.rate:.0f}%\nn={exposures}" if values else f"{exposures}"
        axes.text(position, 0.025, label, ha="center", va="bottom", fontsize=7 if values else 5.5, bbox=box)


def _bracket(axes: Axes, left: float, right: float, height: float, label: str) -> None:
    tick = 0.015
    axes.plot(
        [left, left, right, right], [height - tick, height, height, height - tick], color="#222222", lw=0.8
    )
    axes.text((left + right) / 2, height + 0.004, label, ha="center", va="bottom", fontsize=7.5)


def _find(comparisons: list[Comparison], factor: str, first: str, second: str) -> Comparison | None:
    for comparison in comparisons:
        if comparison.factor == factor and {comparison.first, comparison.second} == {first, second}:
            return comparison
    return None


# A tick label longer than this is slanted, so neighbours cannot overlap (an agent operator's name).
LONG_LABEL = 12


def _style(axes: Axes, title: str, labels: list[str], top: float) -> None:
    axes.set_title(title, loc="left", fontsize=10, fontweight="bold")
    axes.set_ylim(0, top)
    axes.set_yticks([0, 0.25, 0.5, 0.75, 1.0], ["0%", "25%", "50%", "75%", "100%"])
    axes.set_ylabel("avoidance rate")
    slanted = len(labels) > 4 or any(len(label) > LONG_LABEL for label in labels)
    axes.set_xticks(
        range(len(labels)), labels, rotation=30 if slanted else 0, ha="right" if slanted else "center"
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
    rows = [report.cell(operator, ALL) for operator in operators]
    for index, (operator, row) in enumerate(zip(operators, rows, strict=True)):
        _bars(axes, [index], [row], 0.6, colours[operator])
    comparisons = list(report.model.comparisons) if report.model else []
    height = 1.06
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
    _style(axes, "(a) by operator", operators, max(1.12, height + 0.02))


def panel_by_type(axes: Axes, report: GroupReport) -> None:
    order = type_order(report)
    _bars(axes, list(range(len(order))), [report.cell(ALL, name) for name in order], 0.65, POOLED_COLOUR)
    comparisons = list(report.model.comparisons) if report.model else []
    for index in range(len(order) - 1):
        found = _find(comparisons, "pattern_type", order[index], order[index + 1])
        if found is not None:
            _bracket(axes, index + 0.08, index + 0.92, 1.06 + BRACKET_STEP * (index % 2), found.label)
    _style(
        axes, "(b) by dark-pattern type (brackets: neighbours)", [type_title(name) for name in order], 1.22
    )


def panel_by_type_and_operator(axes: Axes, report: GroupReport) -> None:
    order = type_order(report)
    operators = report.operators
    colours = _operator_colours(report)
    width = 0.8 / max(1, len(operators))
    for index, operator in enumerate(operators):
        offset = (index - (len(operators) - 1) / 2) * width
        positions = [position + offset for position in range(len(order))]
        rows = [report.cell(operator, name) for name in order]
        _bars(axes, positions, rows, width * 0.92, colours[operator], values=False)
    _style(axes, "(c) by type for each operator (n at the foot)", [type_title(name) for name in order], 1.12)
    handles = [Patch(color=colours[operator], label=operator) for operator in operators]
    axes.legend(
        handles=handles,
        frameon=False,
        fontsize=8,
        loc="upper left",
        bbox_to_anchor=(1.0, 1.0),
    )


PANELS = {"a": panel_by_operator, "b": panel_by_type, "c": panel_by_type_and_operator}


def figure4(report: GroupReport) -> Figure:
    """The three panels side by side, panel (c) the widest."""
    figure = Figure(figsize=(17, 4.6))
    axes = figure.subplots(1, 3, gridspec_kw={"width_ratios": [max(2, len(report.operators)), 6, 9]})
    for panel, draw in zip(axes, PANELS.values(), strict=True):
        draw(panel, report)
    figure.suptitle(report.label, x=0.01, ha="left", fontsize=8, color="#555555")
    figure.tight_layout()
    return figure


def panel_figure(report: GroupReport, panel: str) -> Figure:
    widths = {"a": 1.4 + 0.9 * len(report.operators), "b": 7.0, "c": 10.0}
    figure = Figure(figsize=(widths[panel], 4.4))
    axes = figure.subplots()
    PANELS[panel](axes, report)
    figure.tight_layout()
    return figure


def _save(figure: Figure, stem: Path) -> list[Path]:
    written = []
    for extension in FORMATS:
        path = stem.with_suffix(f".{extension}")
        metadata = {"Date": None} if extension == "svg" else {"Software": None}
        figure.savefig(path, dpi=150, metadata=metadata)
        written.append(path)
    return written


def write_figures(report: GroupReport, folder: Path, prefix: str = "figure4") -> list[Path]:
    """figure4.{png,svg} (three panels) and figure4a/b/c.{png,svg}; returns the files written."""
    if not report.rows:
        raise SusbenchError(f"{report.label}: no injected episodes, so nothing to plot")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SusbenchError(f"{folder}: cannot create the figures folder: {exc}") from None
    with rc_context(STYLE):
        written = _save(figure4(report), folder / prefix)
        for panel in PANELS:
            written += _save(panel_figure(report, panel), folder / f"{prefix}{panel}")
    return written


def figure_stem(group: GroupReport, index: int) -> str:
    """`figure4` for the first group; the others named by their configuration, e.g.
    `figure4-2-live-2027-02-01` or `figure4-3-snapshot-localweb-2026-11-29`."""
    if index == 1:
        return "figure4"
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
