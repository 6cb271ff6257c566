"""The command line as a user meets it: help, schemas, and errors without tracebacks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from rich.console import Console

from susbench.cli.run import ProgressDisplay
from susbench.controller import RunSummary


def susbench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "susbench", *args], capture_output=True, text=True, timeout=120, check=False
    )


def test_help_lists_every_command() -> None:
    result = susbench("--help")
    assert result.returncode == 0, result.stderr
    for command in (
        "web",
        "record",
        "snapshot",
        "replay",
        "injections",
        "extension",
        "run",
        "report",
        "query",
    ):
        assert command in result.stdout


def test_schema_of_one_model() -> None:
    result = susbench("schema", "Task")
    assert result.returncode == 0, result.stderr
    schema = json.loads(result.stdout)
    assert schema["title"] == "Task"
    assert "instruction" in schema["properties"]


def test_schema_of_unknown_model_is_a_clear_error() -> None:
    result = susbench("schema", "Nope")
    assert result.returncode == 2
    assert "unknown model 'Nope'" in result.stderr
    assert "Traceback" not in result.stderr


def test_bad_task_file_is_reported_without_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "task.yaml"
    bad.write_text(
        "id: t\nsite: shop.test\nstart_url: https://shop.test/\ninstruction: Buy\ninjections: []\n"
    )
    result = susbench("record", str(bad), "--out", str(tmp_path / "s.wacz"))
    assert result.returncode == 2
    assert str(bad) in result.stderr
    assert "Traceback" not in result.stderr


def test_run_progress_says_why_a_run_started_fresh() -> None:
    console = Console(record=True, width=200)
    notice = (
        "started run-b fresh: run-a in this database was asked for the same way but with another snapshot"
    )
    with ProgressDisplay("careful", console) as display:
        display.started(RunSummary(run_id="run-b", planned=3, skipped=0, notice=notice))
    assert notice in console.export_text()


def test_live_with_the_container_browser_is_refused_in_one_line(tmp_path: Path) -> None:
    result = susbench(
        "run", "--browser", "container", "--live", "--operator", "naive", "--db", str(tmp_path / "r")
    )
    assert result.returncode == 2
    assert "--live needs --browser local: the browser container has no network" in result.stderr
    assert "Traceback" not in result.stderr
