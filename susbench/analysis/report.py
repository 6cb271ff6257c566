"""The report `susbench demo` prints and writes: every configuration group's rates and model, as
rich tables, and Figure 4 with the HTML page in a folder.

The analysis itself lives in `susbench.analysis`; `susbench report` (susbench.cli.analysis) has the
options (HTML, figures, breakdowns, pooling).
"""

from __future__ import annotations

from pathlib import Path

from rich.console import RenderableType

from susbench.analysis.html_report import default_gallery, write_report
from susbench.analysis.model import ModelSpec
from susbench.analysis.render import render_analysis
from susbench.analysis.results import group_results
from susbench.analysis.summary import AnalysisReport, analyse, build_analysis
from susbench.results.store import Store


def build_report(store: Store, where: str = "") -> AnalysisReport:
    """Rates per configuration group with the main-effects model; `where` filters episode_outcomes."""
    return build_analysis(store, where, model=ModelSpec())


def render_report(report: AnalysisReport) -> RenderableType:
    return render_analysis(report)


def write_report_folder(store: Store, folder: Path, pool: bool = False) -> tuple[AnalysisReport, list[Path]]:
    """The report with the main-effects model, also written to `folder`: Figure 4 of each
    configuration group (PNG and SVG) and one self-contained report.html; `pool` makes one group of
    every run (the demo's task sets replay from snapshots of their own)."""
    groups = group_results(store, pool=pool)
    report = analyse(groups, str(store.path), pool, model=ModelSpec())
    episodes = {group.label: group.episodes for group in groups}
    return report, write_report(report, episodes, folder, default_gallery())
