"""The report `susbench demo` prints: every configuration group's rates and model, as rich tables.

The analysis itself lives in `susbench.analysis`; `susbench report` (susbench.analysis_cli) has the
options (HTML, figures, breakdowns, pooling).
"""

from __future__ import annotations

from rich.console import RenderableType

from susbench.analysis.model import ModelSpec
from susbench.analysis.render import render_analysis
from susbench.analysis.summary import AnalysisReport, build_analysis
from susbench.store import Store


def build_report(store: Store, where: str = "") -> AnalysisReport:
    """Rates per configuration group with the main-effects model; `where` filters episode_outcomes."""
    return build_analysis(store, where, model=ModelSpec())


def render_report(report: AnalysisReport) -> RenderableType:
    return render_analysis(report)
