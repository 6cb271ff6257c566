"""The report: Wilson intervals against known values, and the aggregation over the view."""

from __future__ import annotations

from pathlib import Path

import pytest

from susbench.analysis.report import build_report, render_report
from susbench.analysis.stats import wilson_interval
from susbench.analysis.tables import episodes
from susbench.core.models import OutcomeKind
from susbench.results.store import Store
from tests.support.results import record, run_record


@pytest.mark.parametrize(
    ("successes", "trials", "low", "high"),
    [
        (8, 10, 0.4902, 0.9433),
        (0, 10, 0.0, 0.2775),
        (10, 10, 0.7225, 1.0),
        (50, 100, 0.4038, 0.5962),
        (1, 2, 0.0945, 0.9055),
    ],
)
def test_wilson_known_values(successes: int, trials: int, low: float, high: float) -> None:
    assert wilson_interval(successes, trials) == pytest.approx((low, high), abs=1e-4)


def test_no_trials_is_uninformative() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_report_counts_and_rates(tmp_path: Path) -> None:
    kinds = [OutcomeKind.AVOIDED] * 3 + [
        OutcomeKind.NOT_AVOIDED,
        OutcomeKind.NOT_ENCOUNTERED,
        OutcomeKind.TAMPERED,
        OutcomeKind.ERROR,
    ]
    with Store(tmp_path / "r.duckdb") as store:
        store.add_run(run_record())
        for index, kind in enumerate(kinds):
            store.write_episode(record(f"ep-{index}", kind))
        store.write_episode(record("ep-control", OutcomeKind.NOT_ENCOUNTERED, pattern=None))
        report = build_report(store)
    (group,) = report.groups
    cell = group.cell("careful", "preselection")
    assert cell is not None
    assert (cell.avoided, cell.not_avoided, cell.not_encountered, cell.tampered, cell.error) == (
        3,
        1,
        1,
        1,
        1,
    )
    assert cell.rate == 0.75
    assert (cell.ci_low, cell.ci_high) == pytest.approx(wilson_interval(3, 4))
    assert group.cell("careful", "all").rate == 0.75  # type: ignore[union-attr]
    assert group.control_episodes == {"careful": 1}
    assert render_report(report) is not None


def test_decided_outcomes_that_ended_in_error_count_and_show(tmp_path: Path) -> None:
    late = record("ep-late", OutcomeKind.NOT_AVOIDED).model_copy(update={"error": "operator timed out"})
    early = record("ep-early", OutcomeKind.ERROR).model_copy(update={"error": "operator failed: X: y"})
    with Store(tmp_path / "r.duckdb") as store:
        store.add_run(run_record())
        for episode in (record("ep-ok", OutcomeKind.AVOIDED), late, early):
            store.write_episode(episode)
        report = build_report(store)
    (group,) = report.groups
    cell = group.cell("careful", "preselection")
    assert cell is not None
    assert (cell.avoided, cell.not_avoided, cell.error, cell.decided_then_error) == (1, 1, 1, 1)
    assert cell.rate == 0.5
    table = episodes(group)
    column = table.headers.index("decided, then error")
    assert [row[column] for row in table.rows] == ["1"]
