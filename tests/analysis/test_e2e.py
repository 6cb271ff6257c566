"""The analysis on results of real runs: scripted baselines on the snapshot and on the live local web.

One module-scoped database holds four short runs on three tasks: naive and careful on the bundled
snapshot, naive live at the snapshot's recording date (through the CLI, with --live-date), and
naive live after every site's redesign.
"""

from __future__ import annotations

import json
import re
import sys
from datetime import date
from pathlib import Path

import pytest
from PIL import Image

from susbench.analysis.compare import compare_runs
from susbench.analysis.figures import PANELS, write_figures
from susbench.analysis.model import ModelSpec
from susbench.analysis.summary import build_analysis
from susbench.catalog.injections import load_injections
from susbench.catalog.tasks import load_tasks, select_tasks
from susbench.cli.main import main
from susbench.controller import RunOptions, run_benchmark
from susbench.results.store import Store
from tests.analysis.test_drift import RECORDED, REDESIGNED, expected_anchor_changes

pytestmark = pytest.mark.e2e

TASKS = "threadline-scarf-cart,voltcart-laptop-cart,taskflow-storage-checkout"


def cli(monkeypatch: pytest.MonkeyPatch, *arguments: str) -> None:
    monkeypatch.setattr(sys, "argv", ["susbench", *arguments])
    main()


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str | Path]:
    """The database and the run id of each run in it."""
    db = tmp_path_factory.mktemp("analysis") / "results.duckdb"
    runs: dict[str, str | Path] = {"db": db}
    for operator in ("naive", "careful"):
        options = RunOptions(tasks=TASKS, operator=operator, parallel=2, db=db)
        runs[f"snapshot-{operator}"] = run_benchmark(options).run_id
    live = ["run", "--operator", "naive", "--tasks", TASKS, "--live", "--live-date", RECORDED]
    with pytest.MonkeyPatch.context() as patch:
        cli(patch, *live, "--parallel", "2", "--db", str(db))
    redesigned = RunOptions(
        tasks=TASKS, operator="naive", live=True, live_date=date.fromisoformat(REDESIGNED), parallel=2, db=db
    )
    runs["live-redesigned"] = run_benchmark(redesigned).run_id
    with Store(db, read_only=True) as store:
        _, rows = store.query("SELECT run_id, config->>'live_date' FROM runs WHERE config->>'mode' = 'live'")
    runs["live-recorded"] = next(run_id for run_id, day in rows if day == RECORDED)
    return runs


def test_report_keeps_configurations_apart_and_fits_the_model(results: dict[str, str | Path]) -> None:
    with Store(Path(results["db"]), read_only=True) as store:
        report = build_analysis(store, model=ModelSpec())
    labels = [group.label for group in report.groups]
    assert len(labels) == 3 and any("live date 2027-02-01" in label for label in labels)
    (snapshot,) = [group for group in report.groups if group.configuration["mode"] == "snapshot"]
    assert snapshot.operators == ["careful", "naive"]
    assert [snapshot.cell(operator, "all").rate for operator in ("careful", "naive")] == [1.0, 0.0]  # type: ignore[union-attr]
    assert snapshot.model is not None and snapshot.model.converged
    (pair,) = [c for c in snapshot.model.comparisons if c.factor == "operator"]
    assert pair.p_holm < 0.05 and pair.label != "n.s."


def test_figure4_is_drawn_from_the_real_runs(results: dict[str, str | Path], tmp_path: Path) -> None:
    with Store(Path(results["db"]), read_only=True) as store:
        report = build_analysis(store, model=ModelSpec())
    (snapshot,) = [group for group in report.groups if group.configuration["mode"] == "snapshot"]
    written = write_figures(snapshot, tmp_path / "one")
    again = write_figures(snapshot, tmp_path / "two")
    assert [path.name for path in written] == [
        f"figure4{panel}.{kind}" for panel in ("", "-a", "-b", "-c") for kind in ("png", "svg", "pdf")
    ] + ["figure4.txt"]
    assert [path.read_bytes() for path in written] == [path.read_bytes() for path in again]  # reproducible
    with Image.open(written[0]) as image:
        assert image.size == (3150, 810)  # 21 x 5.4 in at 150 dpi
    svg = written[1].read_text()
    for text in (
        "(a) by operator",
        "(b) by type, pooled over",
        "(c) by type for each operator",
        "Confirm Shaming",
    ):
        assert text in svg


def test_html_report_is_one_self_contained_page(
    results: dict[str, str | Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    cli(monkeypatch, "report", "--db", str(results["db"]), "--html", str(tmp_path), "--json", "--by", "task")
    printed = json.loads(capsys.readouterr().out)
    assert sorted(group["configuration"]["mode"] for group in printed["groups"]) == [
        "live",
        "live",
        "snapshot",
    ]
    html = (tmp_path / "report.html").read_text()
    assert "<script" not in html and not re.search(r'(src|href)="https?:', html)
    assert html.count("<svg") == 3  # Figure 4 of each configuration, inline
    for run_id in (results["snapshot-naive"], results["snapshot-careful"], results["live-redesigned"]):
        assert str(run_id) in html
    # the third configuration's Figure 4 and its panels, named by the configuration
    assert len(list(tmp_path.glob("figure4-1-*.png"))) == 1 + len(PANELS)
    assert len(list(tmp_path.glob("figure4-3-*.svg"))) == 1 + len(PANELS)


def test_live_and_snapshot_agree_at_the_recording_date(results: dict[str, str | Path]) -> None:
    with Store(Path(results["db"]), read_only=True) as store:
        result = compare_runs(store, str(results["live-recorded"]), str(results["snapshot-naive"]))
    assert (result.pairs, result.agreement, result.flagged_tasks) == (3, 1.0, ())
    assert result.overall.mcnemar_p == 1.0


def test_compare_flags_the_tasks_the_redesign_broke(
    results: dict[str, str | Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    cli(
        monkeypatch,
        "compare",
        str(results["snapshot-naive"]),
        str(results["live-redesigned"]),
        "--db",
        str(results["db"]),
        "--json",
        "--html",
        str(tmp_path),
    )
    printed = json.loads(capsys.readouterr().out)
    catalog = {injection.id: injection for injection in load_injections()}
    tasks = select_tasks(load_tasks(injections=catalog), TASKS, catalog)
    broken, _ = expected_anchor_changes([catalog[i] for task in tasks for i in task.injections], REDESIGNED)
    flagged = {(task["task_id"], task["injection_id"]) for task in printed["flagged_tasks"]}
    assert {injection for _, injection in flagged} == broken
    assert flagged == {("threadline-scarf-cart", "threadline-item-discount-shame")}
    assert printed["agreement"] == pytest.approx(2 / 3)
    assert printed["flagged_tasks"][0]["changes"] == ["not_avoided -> not_encountered (anchor not found)"]
    assert "threadline-scarf-cart" in (tmp_path / "compare.html").read_text()
