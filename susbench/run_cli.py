"""Commands to run the benchmark and read its results: run, demo, report, query, results export."""

from __future__ import annotations

import json
import sys
from datetime import date, datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from susbench.errors import InputError, SusbenchError
from susbench.loading import read_data_file
from susbench.models import Backend, ReplayMode
from susbench.operators.base import ActionFormat, ObservationKind, OperatorSettings
from susbench.report import build_report, render_report
from susbench.store import EpisodeRecord, Store

if TYPE_CHECKING:
    from susbench.controller import ExecutorFactory, RunOptions, RunSummary

BACKEND_HELP = "local: worker processes on this machine; ray: Ray tasks on an embedded node or a cluster"
RAY_ADDRESS_HELP = "join this Ray cluster (default: $RAY_ADDRESS; neither: start an embedded node)"
BROWSERS_HELP = "browsers of the embedded Ray node (default: its CPU count)"

results_app = typer.Typer(no_args_is_help=True)

DB_HELP = "DuckDB results file"
DEFAULT_DB = Path("results.duckdb")


def _console() -> Console:
    """Wide enough for the report's type names when output goes to a file or CI log."""
    return Console(highlight=False, width=None if sys.stdout.isatty() else 140)


class ProgressDisplay:
    """The run's progress bar; in a log (not a terminal) one line per stored episode instead."""

    def __init__(self, operator: str, console: Console) -> None:
        self._operator = operator
        self._progress = Progress(
            TextColumn("[bold]{task.fields[operator]}[/]"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[outcomes]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
        )
        self._bar = self._progress.add_task("run", total=0, operator=operator, outcomes="")

    def __enter__(self) -> ProgressDisplay:
        self._progress.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._progress.stop()

    def started(self, summary: RunSummary) -> None:
        if summary.notice:
            self._progress.console.print(summary.notice, style="yellow", soft_wrap=True)
        self._progress.update(self._bar, total=summary.planned - summary.skipped)

    def stored(self, record: EpisodeRecord, summary: RunSummary) -> None:
        text = " ".join(f"{kind}={count}" for kind, count in sorted(summary.outcomes.items()))
        self._progress.update(self._bar, advance=1, outcomes=text)
        if not self._progress.console.is_terminal:
            episode = record.episode
            self._progress.console.print(
                f"episode {episode.id} {episode.task_id} repeat {episode.repeat}: "
                f"{record.outcome.kind.value}" + (f" ({record.error})" if record.error else ""),
                highlight=False,
                markup=False,
                soft_wrap=True,
            )


def _run_with_progress(options: RunOptions, console: Console, executor: ExecutorFactory) -> RunSummary:
    from susbench.controller import run_benchmark

    with ProgressDisplay(options.operator, console) as display:
        return run_benchmark(options, display, executor)


def operator_settings(
    model: str | None,
    base_url: str | None,
    observation: ObservationKind | None,
    max_steps: int | None,
    action_format: ActionFormat | None,
    config: Path | None,
) -> OperatorSettings:
    """The operator's settings from the command line and its `--operator-config` file."""
    data = {} if config is None else read_data_file(config)
    if not isinstance(data, dict):
        raise InputError(f"{config}: expected a mapping of settings, got {type(data).__name__}")
    return OperatorSettings(
        model=model,
        base_url=base_url,
        observation=observation,
        max_steps=max_steps,
        action_format=action_format,
        config=data,
        config_source=str(config) if config else "--operator-config",
    )


def run(
    operator: Annotated[
        str,
        typer.Option(
            help="naive, careful, random (baselines); openai-chat, openai-cua, anthropic-cu (agents); "
            "idle; an installed plugin's name, or module:factory"
        ),
    ],
    tasks: Annotated[
        str, typer.Option(help="all, a task id, a site host, a pattern type or a glob over ids")
    ] = "all",
    snapshot: Annotated[Path | None, typer.Option(help="WACZ to replay (default: the bundled one)")] = None,
    live: Annotated[
        bool, typer.Option("--live", help="run against the live (local) web, archiving episodes")
    ] = False,
    live_resolve: Annotated[
        list[str] | None, typer.Option(help="HOST[:PORT]=IP:PORT upstream for --live (default: local web)")
    ] = None,
    live_date: Annotated[
        datetime | None,
        typer.Option(formats=["%Y-%m-%d"], help="the local web's date for --live (default: today)"),
    ] = None,
    repeats: Annotated[int, typer.Option(min=1, help="episodes per task")] = 1,
    seed: Annotated[int, typer.Option(help="seeds injection choice, control share and operators")] = 0,
    control_rate: Annotated[float, typer.Option(min=0.0, max=1.0, help="share of control episodes")] = 0.0,
    parallel: Annotated[
        int | None, typer.Option(min=1, help="episodes at once (local backend; default 1)")
    ] = None,
    db: Annotated[Path, typer.Option(help=DB_HELP)] = DEFAULT_DB,
    step_timeout: Annotated[float, typer.Option(help="seconds one operator step may take")] = 15.0,
    episode_timeout: Annotated[
        float | None,
        typer.Option(min=0.1, help="seconds one episode may take (default: the task's max_seconds)"),
    ] = None,
    headed: Annotated[bool, typer.Option("--headed", help="show the browser")] = False,
    replay_mode: Annotated[
        ReplayMode,
        typer.Option(
            help="direct: Chromium's host-resolver rules to the replayer (fast); proxy: HTTP(S) proxy"
        ),
    ] = "direct",
    model: Annotated[str | None, typer.Option(help="agents: the model to ask")] = None,
    base_url: Annotated[
        str | None,
        typer.Option(help="agents: the SDK's base URL (OpenAI-style: .../v1; Anthropic: the host)"),
    ] = None,
    observation: Annotated[
        ObservationKind | None,
        typer.Option(help="agents: screenshot, som (marked screenshot + list), axtree"),
    ] = None,
    max_steps: Annotated[int | None, typer.Option(min=1, help="agents: model turns per episode")] = None,
    action_format: Annotated[
        ActionFormat | None, typer.Option(help="openai-chat: actions as tool calls, or as JSON in the reply")
    ] = None,
    operator_config: Annotated[
        Path | None, typer.Option(help="agents: a YAML file of further settings (README: Agents)")
    ] = None,
    backend: Annotated[Backend, typer.Option(help=BACKEND_HELP)] = "local",
    ray_address: Annotated[str | None, typer.Option(help=RAY_ADDRESS_HELP)] = None,
    browsers_per_node: Annotated[int | None, typer.Option(min=1, help=BROWSERS_HELP)] = None,
) -> None:
    """Run tasks with an operator; re-running the same command resumes where it stopped."""
    from susbench.controller import RunOptions
    from susbench.distributed import BackendOptions, local_parallel, open_backend

    console = _console()
    where = BackendOptions(backend=backend, ray_address=ray_address, browsers_per_node=browsers_per_node)
    options = RunOptions(
        tasks=tasks,
        operator=operator,
        snapshot=snapshot,
        live=live,
        live_resolve=tuple(live_resolve or ()),
        live_date=live_date.date() if live_date else None,
        repeats=repeats,
        seed=seed,
        control_rate=control_rate,
        parallel=local_parallel(where, parallel, default=1),
        db=db,
        step_timeout_s=step_timeout,
        episode_timeout_s=episode_timeout,
        headless=not headed,
        replay_mode=replay_mode,
        operator_settings=operator_settings(
            model, base_url, observation, max_steps, action_format, operator_config
        ),
    )
    with open_backend(where) as executor:
        summary = _run_with_progress(options, console, executor)
    outcomes = ", ".join(f"{kind} {count}" for kind, count in sorted(summary.outcomes.items())) or "none"
    console.print(
        f"{summary.run_id}: {summary.stored} episodes stored, {summary.skipped} already stored "
        f"(of {summary.planned}); outcomes: {outcomes}",
        soft_wrap=True,
    )
    if summary.interrupted:
        raise typer.Exit(130)


def demo(
    db: Annotated[Path | None, typer.Option(help=f"{DB_HELP} (default: demo-<today>.duckdb)")] = None,
    snapshot: Annotated[Path | None, typer.Option(help="WACZ to replay (default: the bundled one)")] = None,
    parallel: Annotated[
        int | None, typer.Option(min=1, help="episodes at once (local backend; default 2)")
    ] = None,
    backend: Annotated[Backend, typer.Option(help=BACKEND_HELP)] = "local",
    ray_address: Annotated[str | None, typer.Option(help=RAY_ADDRESS_HELP)] = None,
    browsers_per_node: Annotated[int | None, typer.Option(min=1, help=BROWSERS_HELP)] = None,
) -> None:
    """Every task once with each scripted baseline, offline from the bundled snapshot, then the report."""
    from susbench.controller import RunOptions
    from susbench.distributed import BackendOptions, local_parallel, open_backend

    db = db or Path(f"demo-{date.today().isoformat()}.duckdb")
    console = _console()
    where = BackendOptions(backend=backend, ray_address=ray_address, browsers_per_node=browsers_per_node)
    at_once = local_parallel(where, parallel, default=2)
    with open_backend(where) as executor:
        for operator in ("naive", "careful", "random"):
            console.print(f"[bold]{operator}[/]")
            options = RunOptions(tasks="all", operator=operator, snapshot=snapshot, parallel=at_once, db=db)
            _run_with_progress(options, console, executor)
    with Store(db, read_only=True) as store:
        console.print(render_report(build_report(store)))
    console.print(f'results: {db}  (try `susbench query "SELECT * FROM episode_outcomes LIMIT 5" --db {db}`)')


def query(
    sql: Annotated[
        str, typer.Argument(help='SQL, e.g. "SELECT outcome, count(*) FROM episode_outcomes GROUP BY 1"')
    ],
    db: Annotated[Path, typer.Option(help=DB_HELP)] = DEFAULT_DB,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON rows instead of a table")] = False,
) -> None:
    """Run SQL on a results database and print a table."""
    with Store(db, read_only=True) as store:
        columns, rows = store.query(sql)
    if as_json:
        typer.echo(json.dumps([dict(zip(columns, row, strict=True)) for row in rows], default=str, indent=2))
        return
    table = Table(*columns, caption=f"{len(rows)} rows")
    for row in rows:
        table.add_row(*("NULL" if value is None else str(value) for value in row))
    _console().print(table)


@results_app.command("export")
def export(
    parquet: Annotated[
        Path, typer.Option("--parquet", help="folder to write one Parquet file per table/view")
    ],
    db: Annotated[Path, typer.Option(help=DB_HELP)] = DEFAULT_DB,
) -> None:
    """Export every table and the episode_outcomes view as Parquet."""
    if parquet.exists() and not parquet.is_dir():
        raise SusbenchError(f"{parquet}: is a file; expected a folder for the Parquet files")
    with Store(db, read_only=True) as store:
        written = store.export_parquet(parquet)
    _console().print("\n".join(str(path) for path in written))
