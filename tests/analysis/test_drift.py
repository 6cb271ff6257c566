"""Drift on the local web's own redesign: record the task pages before and after the class renames.

The expected broken anchors are derived from the catalogs alone (which classes each site renames,
which CSS each anchor uses); `drift` measures them in Chromium through the real extension.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from susbench.analysis.drift import drift_tasks, measure_drift, record_live
from susbench.analysis.html_report import drift_page
from susbench.catalog.injections import load_injections
from susbench.core.models import AnchorLocator, Injection
from susbench.web.catalog import specs
from susbench.web.edition import ANATOMY_BUTTON, ANATOMY_CHECKOUT

pytestmark = pytest.mark.e2e

RECORDED = "2026-11-29"
REDESIGNED = "2027-02-01"  # after every site's drift date
TASKS = "threadline-scarf-cart,voltcart-laptop-cart,taskflow-storage-checkout"


def _renamed(anchor: AnchorLocator) -> bool:
    return anchor.css is not None and any(
        f".{name}" in anchor.css for name in (ANATOMY_BUTTON, ANATOMY_CHECKOUT)
    )


def expected_anchor_changes(injections: list[Injection], date: str) -> tuple[set[str], set[str]]:
    """(broken, held by a fallback): from which anchors use a class the site renames by `date`."""
    broken, fallback = set(), set()
    for injection in injections:
        if specs()[injection.site].drift_date > date:
            continue
        fragile = [_renamed(anchor) for anchor in injection.page.anchors]
        if all(fragile):
            broken.add(injection.id)
        elif fragile[0]:
            fallback.add(injection.id)
    return broken, fallback


@pytest.fixture(scope="module")
def catalog() -> dict[str, Injection]:
    return {injection.id: injection for injection in load_injections()}


@pytest.fixture(scope="module")
def recordings(tmp_path_factory: pytest.TempPathFactory, catalog: dict[str, Injection]) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("drift")
    tasks = drift_tasks(TASKS, {"threadline.test", "voltcart.test", "taskflow.test"}, catalog)
    before = record_live(tasks, folder / "before.wacz", date.fromisoformat(RECORDED))
    after = record_live(tasks, folder / "after.wacz", date.fromisoformat(REDESIGNED))
    return before, after


def test_drift_flags_exactly_the_injections_whose_anchors_broke(
    recordings: tuple[Path, Path], catalog: dict[str, Injection], tmp_path: Path
) -> None:
    tasks = drift_tasks(TASKS, {"threadline.test", "voltcart.test", "taskflow.test"}, catalog)
    report = measure_drift(*recordings, tasks, catalog, tmp_path)
    selected = [catalog[injection_id] for task in tasks for injection_id in task.injections]
    broken, fallback = expected_anchor_changes(selected, REDESIGNED)
    assert broken == {"threadline-item-discount-shame"}  # the catalog's one fragile injection
    assert set(report.flagged) == broken
    assert {anchor.injection_id for anchor in report.anchors if anchor.fallback} == fallback
    assert all(anchor.a.status == "anchored" for anchor in report.anchors)
    # the redesign moved the search form and re-priced items: every task page looks and reads different
    assert len(report.pages) == 7 and all(page.problem is None for page in report.pages)
    assert all(page.pixels_changed and page.pixels_changed > 0.01 for page in report.pages)
    assert all(page.text_lines_changed > 0 for page in report.pages)
    assert {d.family: d.changed > 0 for d in report.digests}["html"]
    html = drift_page(report, tmp_path)
    assert "threadline-item-discount-shame" in html and "<script" not in html
    assert (tmp_path / "drift.json").is_file() and all(
        Path(p.diff_image or "").is_file() for p in report.pages
    )


def test_a_snapshot_has_no_drift_from_itself(
    recordings: tuple[Path, Path], catalog: dict[str, Injection], tmp_path: Path
) -> None:
    """Replay is deterministic, so any difference above is the web's, not noise."""
    before, _ = recordings
    tasks = drift_tasks("threadline-scarf-cart", {"threadline.test"}, catalog)
    report = measure_drift(before, before, tasks, catalog, tmp_path)
    assert (report.urls.added, report.urls.removed, report.flagged) == ((), (), ())
    assert all(d.changed == 0 for d in report.digests)
    assert [(page.pixels_changed, page.text_lines_changed) for page in report.pages] == [(0.0, 0), (0.0, 0)]
    assert [anchor.b.status for anchor in report.anchors] == ["anchored"]
