"""The report: Wilson intervals against known values, and the aggregation over the view."""

from __future__ import annotations

from pathlib import Path

import pytest

from susbench.models import OutcomeKind
from susbench.report import build_report, render_report, wilson_interval
from susbench.store import Store
from tests.test_store_results import record


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
        for index, kind in enumerate(kinds):
            store.write_episode(record(f"ep-{index}", kind))
        store.write_episode(record("ep-control", OutcomeKind.NOT_ENCOUNTERED, pattern=None))
        report = build_report(store)
    by_type = {row.pattern_type: row for row in report.rows}
    cell = by_type["preselection"]
    counts = (cell.avoided, cell.not_avoided, cell.not_encountered, cell.tampered, cell.error)
    assert counts == (3, 1, 1, 1, 1)
    assert cell.rate == 0.75
    assert (cell.ci_low, cell.ci_high) == pytest.approx(wilson_interval(3, 4))
    assert by_type["all"].rate == 0.75
    assert report.control_episodes == {"careful": 1}
    assert render_report(report).row_count == 2
