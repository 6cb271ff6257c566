"""The command line as a user meets it: help, schemas, and errors without tracebacks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import typer
from rich.console import Console

from susbench.cli.main import app
from susbench.cli.run import ProgressDisplay, run_options
from susbench.controller import RunOptions, RunSummary
from susbench.distributed import BackendOptions


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


HEAVY = ("mitmproxy", "scipy", "playwright", "duckdb", "numpy", "matplotlib", "docker", "ray")
LOADED = """
import sys
from susbench.cli.main import main
sys.argv = ["susbench", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
seen = sorted(name for name in sys.modules if name.split(".")[0] in ("susbench", *HEAVY))
print(" ".join(seen), file=sys.stderr)
"""


def loaded_by(*args: str) -> set[str]:
    """The project's and the heavy libraries' modules a command line imports."""
    code = f"HEAVY = {HEAVY!r}\n{LOADED}"
    result = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120, check=True
    )
    return set(result.stderr.split())


def test_help_and_version_import_only_the_root_of_the_command_line() -> None:
    for args in (("--help",), ("version",)):
        loaded = loaded_by(*args)
        assert not {name.split(".")[0] for name in loaded} & set(HEAVY), args
        assert {name for name in loaded if name.startswith("susbench.cli.")} == {"susbench.cli.main"}, args
    assert "susbench.cli.run" in loaded_by("run", "--help")


# Shows every command's and subcommand's help in turn, in one process, and prints, per command line,
# the heavy packages its help imported first (those it loaded beyond the commands before it).
EVERY_HELP = """
import contextlib, io, json, sys
import typer
from susbench.cli.main import app
heavy = lambda: {name.split(".")[0] for name in sys.modules if name.split(".")[0] in HEAVY}
root = typer.main.get_command(app)
first = {}

def visit(path, command_of, parent):
    before = heavy()
    command = command_of()  # loading a command's module is part of its help
    shown = io.StringIO()
    with contextlib.redirect_stdout(shown):
        try:
            root.main([*path, "--help"], prog_name="susbench")
        except SystemExit as exc:
            assert exc.code == 0, (path, exc.code)
    assert "Usage" in shown.getvalue(), path
    first[" ".join(["susbench", *path, "--help"])] = sorted(heavy() - before)
    context = command.context_class(command, parent=parent, info_name=path[-1] if path else "susbench")
    for name in getattr(command, "list_commands", lambda context: [])(context):
        visit([*path, name], lambda: command.get_command(context, name), context)

visit([], lambda: root, None)
print(json.dumps(first))
"""


def test_no_commands_help_imports_the_heavy_packages() -> None:
    """`--help` of every command and subcommand: no browser, DuckDB, mitmproxy, statistics or Ray
    (`benchmarks/help_bench.py` times them)."""
    code = f"HEAVY = {HEAVY!r}\n{EVERY_HELP}"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False
    )
    assert result.returncode == 0, result.stderr[-3000:]
    first = json.loads(result.stdout)
    assert len(first) > 40 and "susbench run --help" in first and "susbench replay serve --help" in first
    assert {line: heavy for line, heavy in first.items() if heavy} == {}


def test_run_options_are_the_fields_of_run_options_with_their_defaults() -> None:
    command = typer.main.get_command(app).get_command(None, "run")  # type: ignore[union-attr]
    given = command.make_context("run", ["--operator", "careful", "--headed", "--step-timeout", "9"]).params
    options, where = run_options(given)
    defaults = RunOptions(operator="careful")
    changed = {
        "headless": False,
        "step_timeout_s": 9.0,
        "snapshot": options.snapshot,
        "tasks_dir": options.tasks_dir,
    }
    assert options == defaults.model_copy(update=changed)
    assert where == BackendOptions()
    # `study` is set by `susbench study` alone, never by `run`.
    assert [name for name in RunOptions.model_fields if name not in given] == [
        "operator_settings",
        "tasks_dir",
        "study",
    ]
    help_text = susbench("run", "--help").stdout
    for operator in ("naive", "careful", "random", "openai-chat", "browser-use", "human", "idle"):
        assert operator in help_text, operator


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
