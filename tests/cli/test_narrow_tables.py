"""Every table command at 80 columns: each cell of each row is read back whole from the output.

A table comes out as columns when its cells fit side by side, else one record per row
(`header: value` lines, the first at the margin). Either way no statistic may be cut, folded or
dropped: the rows each command should show are taken from its domain function (or its `--json`),
and every one of them must be found in the text, on one line as columns or as one record.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from rich.console import Console

from susbench.analysis import tables
from susbench.analysis.compare import compare_runs
from susbench.analysis.drift import DriftReport
from susbench.analysis.summary import build_analysis
from susbench.core.models import OutcomeKind
from susbench.core.paths import SNAPSHOTS_DIR
from susbench.core.tables import FittedTable
from susbench.results.store import Store
from susbench.snapshot import Snapshot
from tests.support.results import add_episode, add_run

SUSBENCH = Path(sys.executable).with_name("susbench")
NARROW = {**os.environ, "COLUMNS": "80", "NO_COLOR": "1"}
BUNDLED = next(iter(sorted(SNAPSHOTS_DIR.glob("*.wacz"))))
LONG_TASKS = {  # long task names, as real catalogs have them
    "bazaarly-checkout-partner-offers-order": ("inj-a", "trick_wording"),
    "voltcart-headphones-order-with-protection": ("inj-b", "preselection"),
}


def susbench(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SUSBENCH), *args], capture_output=True, text=True, timeout=600, check=False, cwd=cwd, env=NARROW
    )


def records(lines: Sequence[str]) -> list[list[tuple[str, str]]]:
    """The `header: value` records in the text: a field at the margin starts one, a field indented
    two spaces adds to it, a line indented four continues the field's value (joined by a space)."""
    found: list[list[tuple[str, str]]] = []
    for line in lines:
        line = line.rstrip()
        if line.startswith("    ") and found and found[-1]:
            header, value = found[-1][-1]
            found[-1][-1] = (header, f"{value} {line.strip()}".strip())
            continue
        field = line.removeprefix("  ")
        header, colon, value = field.partition(": ")
        if not colon and field.endswith(":"):
            header, value = field[:-1], ""
        if line.startswith("  ") and found:
            found[-1].append((header, value))
        else:
            found.append([(header, value)])
    return found


def shown_as(
    lines: Sequence[str], headers: Sequence[str], row: Sequence[str], partial: bool = False
) -> str | None:
    """Whether the row is in the text whole: "columns" or "record", else None. With `partial` the
    row gives the first cells only, and the table's other columns may follow."""
    cells = [cell for cell in row if cell]
    tail = r"(\s.*)?" if partial else r"\s*"
    one_line = re.compile(r"\s*" + r"\s+".join(re.escape(cell) for cell in cells) + tail)
    if any(one_line.fullmatch(line) for line in lines):
        return "columns"
    expected = [(header, " ".join(cell.split())) for header, cell in zip(headers, row, strict=True)]
    found = records(lines)
    if partial:
        found = [record[: len(expected)] for record in found]
    return "record" if expected in found else None


def assert_shown(
    text: str, headers: Sequence[str], rows: Sequence[Sequence[str]], partial: bool = False
) -> set[str]:
    """Every row whole in `text`, no line over 80 columns; returns the forms the rows came in."""
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80, max(lines, key=len)
    assert rows, "no rows to look for"
    forms = set()
    for row in rows:
        form = shown_as(lines, headers, row, partial)
        assert form is not None, f"row {row} is not whole in:\n{text}"
        forms.add(form)
    return forms


def assert_table_shown(text: str, table: tables.Rows) -> set[str]:
    return assert_shown(text, table.headers, table.rows)


def test_a_table_that_fits_is_columns_and_one_that_does_not_is_records() -> None:
    narrow = Console(width=50, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
    wide = Console(width=200, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
    headers = ("task", "avoidance", "95% CI")
    rows = [["bazaarly-checkout-partner-offers-order", "12.5%", "[2.2%, 47.1%]"]]
    for console in (narrow, wide):
        console.print(FittedTable(headers, rows, "Breakdown", left=1))
    assert assert_shown(narrow.export_text(), headers, rows) == {"record"}
    assert assert_shown(wide.export_text(), headers, rows) == {"columns"}


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """Three operators, long task names; a snapshot run and a live run of `careful` to compare."""
    path = tmp_path / "results.duckdb"
    kinds = [OutcomeKind.AVOIDED, OutcomeKind.NOT_AVOIDED, OutcomeKind.NOT_ENCOUNTERED]
    with Store(path) as store:
        for operator in ("naive", "careful", "random"):
            add_run(store, f"run-{operator}", operator)
        add_run(store, "run-careful-live", "careful", mode="live")
        for repeat in range(6):
            for index, task in enumerate(LONG_TASKS):
                for operator in ("naive", "careful", "random"):
                    kind = kinds[(repeat + index + len(operator)) % len(kinds)]
                    add_episode(
                        store, f"run-{operator}", operator, task, kind, repeat=repeat, tasks=LONG_TASKS
                    )
                kind = kinds[(repeat + index) % 2]
                add_episode(
                    store,
                    "run-careful-live",
                    "careful",
                    task,
                    kind,
                    repeat=repeat,
                    mode="live",
                    tasks=LONG_TASKS,
                )
    return path


def test_report_by_task_keeps_every_interval_and_name_whole(db: Path) -> None:
    shown = susbench("report", "--db", str(db), "--by", "task")
    assert shown.returncode == 0, shown.stderr
    with Store(db, read_only=True) as store:
        analysis = build_analysis(store, breakdown="task")
    for group in analysis.groups:
        assert_table_shown(shown.stdout, tables.avoidance(group))
        assert_table_shown(shown.stdout, tables.episodes(group))
        forms = assert_table_shown(shown.stdout, tables.breakdown(group))
        assert forms == {"record"}, "the breakdown is wider than 80 columns: its rows are records"
    fields = [field for record in records(shown.stdout.splitlines()) for field in record]
    assert {("task", task) for task in LONG_TASKS} <= set(fields), "each record names its task as `task:`"
    assert not [field for field in fields if field[0] == "item"]


def test_compare_keeps_the_mcnemar_exact_p(db: Path) -> None:
    shown = susbench("compare", "run-careful-live", "run-careful", "--db", str(db))
    assert shown.returncode == 0, shown.stderr
    with Store(db, read_only=True) as store:
        report = compare_runs(store, "run-careful-live", "run-careful")
    summary = tables.compare_summary(report)
    assert summary in " ".join(shown.stdout.split()), "the summary line (agreement, McNemar) is cut"
    types = tables.compare_types(report)
    assert any("McNemar" in header for header in types.headers)
    assert_table_shown(shown.stdout, types)
    if report.flagged_tasks:
        assert_table_shown(shown.stdout, tables.flagged_tasks(report))


def test_query_keeps_ids_whole(db: Path) -> None:
    sql = "SELECT episode_id, run_id, task_id, operator, outcome FROM episode_outcomes ORDER BY 1 LIMIT 8"
    shown = susbench("query", sql, "--db", str(db))
    rows = json.loads(susbench("query", sql, "--db", str(db), "--json").stdout)
    assert shown.returncode == 0, shown.stderr
    headers = list(rows[0])
    assert_shown(shown.stdout, headers, [[str(row[header]) for header in headers] for row in rows])
    assert "…" not in shown.stdout


def test_injections_list_never_breaks_a_page_mid_word() -> None:
    shown = susbench("injections", "list")
    listed = json.loads(susbench("injections", "list", "--json").stdout)
    assert shown.returncode == 0, shown.stderr
    rows = [[item["id"], item["type"], item["page"]["url"].split("://", 1)[-1]] for item in listed]
    assert_shown(shown.stdout, ("id", "type", "page"), rows)


@pytest.mark.e2e
@pytest.mark.timeout(1800)
def test_drift_keeps_text_pixels_and_problem_columns(tmp_path: Path) -> None:
    task = "pizzapalace-margherita-order"
    shown = susbench("drift", str(BUNDLED), str(BUNDLED), "--tasks", task, "--out", "drift", cwd=tmp_path)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    walked = f"{BUNDLED.name}: task 1/1 {task}"  # progress goes to stderr, once per side
    assert shown.stderr.splitlines() == [walked, walked] and walked not in shown.stdout
    report = DriftReport.model_validate_json((tmp_path / "drift" / "drift.json").read_text())
    pages = tables.pages(report)
    assert {"text lines changed", "pixels changed", "problem"} <= set(pages.headers)
    assert_table_shown(shown.stdout, pages)
    assert_table_shown(shown.stdout, tables.digests(report))
    assert_table_shown(shown.stdout, tables.anchors(report))


def test_snapshot_info_keeps_the_sha256_whole_on_one_line() -> None:
    with Snapshot.open(BUNDLED) as snapshot:
        sha256, manifest = snapshot.sha256, snapshot.manifest
    shown = susbench("snapshot", "info", str(BUNDLED))
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80, max(lines, key=len)
    assert any(line.split() == ["sha256:", sha256] for line in lines), shown.stdout
    assert any(line.split() == ["user_agent:"] for line in lines)
    assert " ".join(" ".join(lines).split()).count(manifest.user_agent) == 1
