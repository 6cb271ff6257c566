"""Grouping, rates, the model and compare over a real DuckDB file filled with stored episodes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from PIL import Image

from susbench.analysis.compare import compare_runs
from susbench.analysis.model import ModelSpec, fit_model
from susbench.analysis.report import write_report_folder
from susbench.analysis.results import group_results
from susbench.analysis.summary import build_analysis
from susbench.cli.main import main
from susbench.core.errors import SusbenchError
from susbench.core.models import OutcomeKind
from susbench.results.store import Store
from tests.support.results import TASKS, add_episode, add_run


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """naive and careful on a snapshot (2 repeats), and naive live with one anchor lost."""
    path = tmp_path / "results.duckdb"
    with Store(path) as store:
        add_run(store, "run-naive", "naive")
        add_run(store, "run-careful", "careful")
        add_run(store, "run-live", "naive", mode="live", live_date="2027-02-01")
        for repeat in range(2):
            for task in TASKS:
                add_episode(store, "run-naive", "naive", task, OutcomeKind.NOT_AVOIDED, repeat)
                add_episode(store, "run-careful", "careful", task, OutcomeKind.AVOIDED, repeat)
                lost = task == "shop-b"
                kind = OutcomeKind.NOT_ENCOUNTERED if lost else OutcomeKind.NOT_AVOIDED
                add_episode(store, "run-live", "naive", task, kind, repeat, mode="live")
    return path


def test_runs_of_different_configurations_are_never_pooled(db: Path) -> None:
    with Store(db, read_only=True) as store:
        groups = group_results(store)
        pooled = group_results(store, pool=True)
    assert [(group.key["mode"], group.operators) for group in groups] == [
        ("live", ["naive"]),
        ("snapshot", ["careful", "naive"]),
    ]
    assert len(pooled) == 1 and pooled[0].label.startswith("POOLED over 3 runs (live, snapshot)")
    assert len(pooled[0].episodes) == sum(len(group.episodes) for group in groups) == 18


def test_container_runs_are_a_group_of_their_own_and_older_local_runs_join_local_ones(db: Path) -> None:
    container = {"browser": "container", "image": "localhost/b:1", "image_chromium": "156", "image_id": "a"}
    with Store(db) as store:
        add_run(store, "run-careful-local", "careful", browser="local", image=None, image_chromium=None)
        add_run(store, "run-careful-box", "careful", **container)
        add_run(store, "run-naive-box", "naive", **{**container, "image_id": "rebuilt"})
        for task in TASKS:
            add_episode(store, "run-careful-local", "careful", task, OutcomeKind.AVOIDED, repeat=5)
            add_episode(store, "run-careful-box", "careful", task, OutcomeKind.AVOIDED)
            add_episode(store, "run-naive-box", "naive", task, OutcomeKind.NOT_AVOIDED)
    with Store(db, read_only=True) as store:
        groups = group_results(store)
    by_runs = {tuple(run.run_id for run in group.runs): group for group in groups}
    local = by_runs[("run-careful", "run-careful-local", "run-naive")]
    boxed = by_runs[("run-careful-box", "run-naive-box")]
    assert len(groups) == 3 and local.key["browser"] == "local" and boxed.operators == ["careful", "naive"]
    assert "container localhost/b:1 (Chromium 156)" in boxed.label
    assert "container" not in local.label


def test_rates_completion_and_counts_per_cell(db: Path) -> None:
    with Store(db, read_only=True) as store:
        report = build_analysis(store, breakdown="task")
    live, snapshot = report.groups
    careful = snapshot.cell("careful", "all")
    assert careful is not None and (careful.rate, careful.avoided, careful.episodes) == (1.0, 6, 6)
    pooled = snapshot.cell("all", "preselection")
    assert pooled is not None and (pooled.rate, pooled.avoided, pooled.not_avoided) == (0.5, 2, 2)
    lost = live.cell("naive", "confirm_shaming")
    assert lost is not None and (lost.rate, lost.not_encountered, lost.completion_rate) == (None, 2, 1.0)
    assert {row.item for row in snapshot.breakdown} == set(TASKS)


def test_model_separates_operators_and_says_what_it_dropped(db: Path) -> None:
    with Store(db, read_only=True) as store:
        (_, snapshot) = group_results(store)
    model = fit_model(snapshot.episodes)
    assert model is not None and model.converged
    (operators,) = [c for c in model.comparisons if c.factor == "operator"]
    assert (operators.first, operators.second, operators.label) == ("careful", "naive", "**")
    assert 0.001 <= operators.p_holm < 0.01  # 6 against 6 exposures, complete separation
    assert operators.log_odds_ratio < -3  # finite despite complete separation
    types = [c for c in model.comparisons if c.factor == "pattern_type"]
    assert len(types) == 3 and all(c.label == "n.s." for c in types)
    with_task = fit_model(snapshot.episodes, ModelSpec(task_effect=True, interaction=True))
    assert with_task is not None
    assert any("not identifiable" in note and "task=shop-" in note for note in with_task.notes)
    assert "operator:pattern_type" in with_task.formula


def test_the_demo_report_folder_keeps_each_configuration_apart(db: Path, tmp_path: Path) -> None:
    """What `susbench demo` writes beside its database: Figure 4 per configuration, and the page."""
    folder = tmp_path / "demo-report"
    with Store(db, read_only=True) as store:
        report, written = write_report_folder(store, folder)
    assert [group.configuration["mode"] for group in report.groups] == ["live", "snapshot"]
    assert report.groups[1].model is not None and report.groups[1].operators == ["careful", "naive"]
    names = sorted(path.name for path in written)
    second = "figure4-2-snapshot-unknown"  # named by its configuration (these runs name no snapshot id)
    stems = sorted(name.removesuffix(".txt") for name in names if name.endswith(".txt"))
    assert stems[0].startswith("figure4-1-live") and stems[1:] == [second]
    for stem in stems:  # every configuration's figure named alike, its panels after a hyphen
        assert {
            f"{stem}{panel}.{kind}" for panel in ("", "-a", "-b", "-c") for kind in ("png", "svg")
        } <= set(names)
    assert "report.html" in names
    assert written[-1] == folder / "report.html"
    with Image.open(folder / f"{second}.png") as image:
        assert image.format == "PNG" and image.width > 1000
    html = (folder / "report.html").read_text()
    assert "2 run configurations differ, so they are reported apart" in html and "POOLED" not in html
    assert html.count("<h3>Figure 4</h3>") == html.count("<h3>Regression</h3>") == 2


def test_compare_pairs_episodes_and_flags_the_lost_anchor(db: Path) -> None:
    with Store(db, read_only=True) as store:
        result = compare_runs(store, "run-naive", "run-live")
        with pytest.raises(SusbenchError, match="share no episode"):
            compare_runs(store, "run-naive", "run-careful")
        with pytest.raises(SusbenchError, match="not a run in this database; expected one of: run-"):
            compare_runs(store, "run-nope", "run-live")
    assert (result.pairs, result.agreement) == (6, 4 / 6)
    assert [(task.task_id, task.changes) for task in result.flagged_tasks] == [
        ("shop-b", ("not_avoided -> not_encountered (anchor not found)",))
    ]
    assert result.overall.exposure_discordant == 2 and result.overall.mcnemar_p == 1.0
    confirm = next(row for row in result.by_type if row.pattern_type == "confirm_shaming")
    assert (confirm.agreement, confirm.both_exposed, confirm.difference) == (0.0, 0, None)


def test_compare_counts_discordant_avoidance_for_mcnemar(tmp_path: Path) -> None:
    path = tmp_path / "r.duckdb"
    with Store(path) as store:
        add_run(store, "run-1", "random")
        add_run(store, "run-2", "random", live_date="x")
        outcomes = [(True, True), (True, False), (True, False), (False, True), (False, False), (True, False)]
        for repeat, (first, second) in enumerate(outcomes):
            for run_id, avoided in (("run-1", first), ("run-2", second)):
                kind = OutcomeKind.AVOIDED if avoided else OutcomeKind.NOT_AVOIDED
                add_episode(store, run_id, "random", "shop-a", kind, repeat)
        result = compare_runs(store, "run-1", "run-2")
    overall = result.overall
    assert (overall.only_first_avoided, overall.only_second_avoided, overall.both_avoided) == (3, 1, 1)
    assert overall.mcnemar_p == pytest.approx(0.625)  # 2 * P(X <= 1), X ~ Bin(4, 1/2)
    assert overall.difference == pytest.approx((2 - 4) / 6)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["report", "--db", "missing.duckdb"], "missing.duckdb: no results database there"),
        (["compare", "a", "b", "--db", "missing.duckdb"], "missing.duckdb: no results database there"),
        (["drift", "none.wacz"], "give SNAPSHOT_B or --live"),
        (["drift", "none.wacz", "--live", "--out", "{tmp}/d"], "none.wacz: snapshot not found"),
        (
            ["run", "--operator", "naive", "--live-date", "2027-02-01", "--db", "{tmp}/r.duckdb"],
            "needs --live",
        ),
    ],
)
def test_bad_input_is_one_clear_error(
    arguments: list[str],
    message: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The user's path through `main()` (in-process: a subprocess costs seconds of imports)."""
    monkeypatch.setattr(sys, "argv", ["susbench", *(argument.format(tmp=tmp_path) for argument in arguments)])
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == 2
    error = capsys.readouterr().err
    assert message in " ".join(error.split())
    assert "Traceback" not in error


def test_report_html_names_each_file_it_wrote_on_its_own_line(
    db: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = tmp_path / "r"
    monkeypatch.setattr(
        sys, "argv", ["susbench", "report", "--db", str(db), "--no-model", "--html", str(folder)]
    )
    main()
    lines = capsys.readouterr().out.splitlines()
    wrote = [line.removeprefix("wrote ") for line in lines if line.startswith("wrote ")]
    assert sorted(wrote) == sorted(str(path) for path in folder.iterdir())
    assert len(wrote) > 2


def test_report_json_names_its_estimator_and_fits_no_model_to_a_handful(
    db: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setattr(
        sys, "argv", ["susbench", "report", "--db", str(db), "--json", "--html", str(tmp_path / "r")]
    )
    main()
    live, snapshot = json.loads(capsys.readouterr().out)["groups"]
    assert live["model"] is None
    assert live["model_note"] == "too few exposures for a model (4; it needs at least 6)"
    assert snapshot["model"]["estimator"] == "Firth's penalized-likelihood logistic regression"
    assert snapshot["model"]["tests"].startswith("penalized likelihood-ratio tests")
    html = (tmp_path / "r" / "report.html").read_text()
    assert "Tasks and sites (3 tasks on 1 sites)" in html and "too few exposures for a model" in html
    # the figure's caption says what the numbers on the bars are, the interval and how avoided was counted
    assert "is its n (the exposures counted)" in html and "95% Wilson score intervals" in html
    assert "avoidance as the paper counts it" in html
