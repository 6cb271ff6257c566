"""Commands to run the benchmark and read its results: run, demo, query, results export, reproduce."""

from __future__ import annotations

import json
import signal
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

from susbench.analysis.report import render_report, write_report_folder
from susbench.catalog.tasks import complete_tasks
from susbench.cli.terminal import output_console
from susbench.core.errors import InputError, SusbenchError
from susbench.core.loading import read_data_file
from susbench.core.models import Backend, BrowserKind, ReplayMode
from susbench.core.paths import complete_snapshots
from susbench.operators import complete_operators
from susbench.operators.base import ActionFormat, ObservationKind, OperatorSettings
from susbench.results.store import EpisodeRecord, Store, archive_folder, trace_folder

if TYPE_CHECKING:
    from susbench.controller import ExecutorFactory, RunOptions, RunSummary
    from susbench.controller.reproduce import Reproduction, Verdict

BACKEND_HELP = "local: worker processes on this machine; ray: Ray tasks on an embedded node or a cluster"
RAY_ADDRESS_HELP = "join this Ray cluster (default: $RAY_ADDRESS; neither: start an embedded node)"
BROWSERS_HELP = "browsers of the embedded Ray node (default: its CPU count)"
TASK_SET_HELP = (
    "localweb: tasks/ on the bundled snapshot; realpages: tasks/realpages/ on real pages, their snapshot "
    "built once from ../shared/realdata into the cache"
)
TaskSetOption = Annotated[str, typer.Option("--task-set", help=TASK_SET_HELP)]

results_app = typer.Typer(no_args_is_help=True)

DB_HELP = "DuckDB results file"
# DuckDB's own names for unaliased aggregates, as a reader would write them.
READABLE_COLUMNS = {"count_star()": "count"}
DEFAULT_DB = Path("results.duckdb")
BrowserOption = Annotated[
    BrowserKind,
    typer.Option(help="local: Chromium on this machine; container: the browser image, with no network"),
]
ImageOption = Annotated[
    str | None,
    typer.Option(help="browser image for --browser container (default: $SUSBENCH_IMAGE, else the version's)"),
]


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


def _destinations(options: RunOptions) -> str:
    """Where this run writes, so no file appears in the current folder unannounced."""
    where = f"results: {options.db.resolve()}"
    if options.live:
        where += f"; each live episode archived in {archive_folder(options.db).resolve()}/"
    traces = trace_folder(options.db)
    if traces.is_dir():
        where += f"; agent traces in {traces.resolve()}/"
    return where


def run(
    operator: Annotated[
        str,
        typer.Option(
            help="naive, careful, random (baselines); openai-chat, openai-cua, anthropic-cu (agents); "
            "idle; an installed plugin's name, or module:factory",
            autocompletion=complete_operators,
        ),
    ],
    tasks: Annotated[
        str,
        typer.Option(
            help="all, a task id, a site host, a pattern type or a glob over ids",
            autocompletion=complete_tasks,
        ),
    ] = "all",
    snapshot: Annotated[
        Path | None,
        typer.Option(help="WACZ to replay (default: the bundled one)", autocompletion=complete_snapshots),
    ] = None,
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
    browser: BrowserOption = "local",
    image: ImageOption = None,
    task_set: TaskSetOption = "localweb",
    serve: Annotated[
        bool,
        typer.Option(
            "--serve", help="human: the screen on a virtual display, for a remote participant (noVNC link)"
        ),
    ] = False,
    port: Annotated[
        int | None, typer.Option(min=0, max=65535, help="--serve: port of the link (default 6080)")
    ] = None,
    host: Annotated[str | None, typer.Option(help="--serve: address to listen on (127.0.0.1)")] = None,
) -> None:
    """Run tasks with an operator; re-running the same command resumes where it stopped."""
    from susbench.controller import RunOptions
    from susbench.controller.stopping import stopping_on_signals
    from susbench.distributed import BackendOptions, local_parallel, open_backend
    from susbench.people.remote import remote_screen

    console = output_console()
    where = BackendOptions(backend=backend, ray_address=ray_address, browsers_per_node=browsers_per_node)
    tasks_dir, snapshot = _task_set_inputs(task_set, snapshot, live)
    options = RunOptions(
        tasks=tasks,
        tasks_dir=tasks_dir,
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
        browser=browser,
        image=image,
        operator_settings=operator_settings(
            model, base_url, observation, max_steps, action_format, operator_config
        ),
    )
    console.print(_destinations(options), soft_wrap=True)
    with (
        stopping_on_signals(),
        remote_screen(serve, port, host, where.backend, options.operator, options.operator_settings, console),
        open_backend(where) as executor,
    ):
        summary = _run_with_progress(options, console, executor)
    console.print(_destinations(options), soft_wrap=True)
    outcomes = ", ".join(f"{kind} {count}" for kind, count in sorted(summary.outcomes.items())) or "none"
    console.print(
        f"{summary.run_id}: {summary.stored} episodes stored, {summary.skipped} already stored "
        f"(of {summary.planned}); outcomes: {outcomes}",
        soft_wrap=True,
    )
    if summary.interrupted:
        raise typer.Exit(128 + (summary.stop_signal or signal.SIGINT))


def _task_set_inputs(name: str, snapshot: Path | None, live: bool) -> tuple[Path, Path | None]:
    """The task set's folder and the snapshot to replay (the one given, else the set's own)."""
    from susbench.catalog.tasksets import task_set, task_set_snapshot

    chosen = task_set(name)
    if live and chosen.built:
        raise SusbenchError(f"--task-set {name} replays recorded real pages only; expected no --live")
    if snapshot is None and not live:
        snapshot = task_set_snapshot(chosen)
    return chosen.tasks_dir, snapshot


def demo(
    db: Annotated[Path | None, typer.Option(help=f"{DB_HELP} (default: demo-<today>.duckdb)")] = None,
    snapshot: Annotated[
        Path | None,
        typer.Option(help="WACZ to replay (default: the bundled one)", autocompletion=complete_snapshots),
    ] = None,
    parallel: Annotated[
        int | None, typer.Option(min=1, help="episodes at once (local backend; default 2)")
    ] = None,
    backend: Annotated[Backend, typer.Option(help=BACKEND_HELP)] = "local",
    ray_address: Annotated[str | None, typer.Option(help=RAY_ADDRESS_HELP)] = None,
    browsers_per_node: Annotated[int | None, typer.Option(min=1, help=BROWSERS_HELP)] = None,
    browser: BrowserOption = "local",
    image: ImageOption = None,
    task_set: TaskSetOption = "localweb",
    local_model: Annotated[
        bool,
        typer.Option(
            "--local-model",
            help="also run the packaged small model (openai-chat on a local llama.cpp server) on the nine "
            "one-per-type tasks (needs the local-model extra)",
        ),
    ] = False,
) -> None:
    """Every task once with each scripted baseline, offline from the bundled snapshot, then the report
    (printed, and as Figure 4 with report.html in <db name>-report/ beside the database)."""
    from susbench.controller import RunOptions
    from susbench.distributed import BackendOptions, local_parallel, open_backend

    db = db or Path(f"demo-{date.today().isoformat()}.duckdb")
    tasks_dir, snapshot = _task_set_inputs(task_set, snapshot, live=False)
    console = output_console()
    where = BackendOptions(backend=backend, ray_address=ray_address, browsers_per_node=browsers_per_node)
    at_once = local_parallel(where, parallel, default=2)
    with open_backend(where) as executor:
        for operator in ("naive", "careful", "random"):
            console.print(f"[bold]{operator}[/]")
            options = RunOptions(
                tasks="all",
                operator=operator,
                snapshot=snapshot,
                tasks_dir=tasks_dir,
                parallel=at_once,
                db=db,
                browser=browser,
                image=image,
            )
            _run_with_progress(options, console, executor)
        if local_model:
            from susbench.agents.local_model import local_run_fields, serving_for_run

            with serving_for_run() as server:
                console.print(f"[bold]openai-chat ({server.model}, on this CPU)[/]")
                chosen = RunOptions(
                    **local_run_fields(server),
                    snapshot=snapshot,
                    tasks_dir=tasks_dir,
                    db=db,
                    browser=browser,
                    image=image,
                )
                _run_with_progress(chosen, console, executor)
    with Store(db, read_only=True) as store:
        report, written = write_report_folder(store, db.parent / f"{db.stem}-report")
    console.print(render_report(report))
    console.print(f'results: {db}  (try `susbench query "SELECT * FROM episode_outcomes LIMIT 5" --db {db}`)')
    figure = ", ".join(str(path) for path in written if path.stem == "figure4")
    console.print(f"report: {written[-1]}  (Figure 4: {figure or 'no injected episodes to plot'})")


def query(
    sql: Annotated[
        str, typer.Argument(help='SQL, e.g. "SELECT outcome, count(*) FROM episode_outcomes GROUP BY 1"')
    ],
    db: Annotated[Path, typer.Option(help=DB_HELP)] = DEFAULT_DB,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON rows instead of a table")] = False,
) -> None:
    """Run SQL on a results database and print a table."""
    with Store(db, read_only=True) as store:
        names, rows = store.query(sql)
    columns = [READABLE_COLUMNS.get(name, name) for name in names]
    if as_json:
        typer.echo(json.dumps([dict(zip(columns, row, strict=True)) for row in rows], default=str, indent=2))
        return
    table = Table(*columns, caption=f"{len(rows)} rows")
    for row in rows:
        table.add_row(*("NULL" if value is None else str(value) for value in row))
    output_console().print(table)


@results_app.command("export")
def export(
    parquet: Annotated[
        Path,
        typer.Option("--parquet", help="folder for the bundle: one Parquet file per table/view + run.json"),
    ],
    db: Annotated[Path, typer.Option(help=DB_HELP)] = DEFAULT_DB,
) -> None:
    """Export every table and view as Parquet, with run.json: how to re-run each run (`reproduce`)."""
    from susbench.results.bundle import export_bundle

    if parquet.exists() and not parquet.is_dir():
        raise SusbenchError(f"{parquet}: is a file; expected a folder for the Parquet files")
    with Store(db, read_only=True) as store:
        written = export_bundle(store, parquet)
    output_console().print("\n".join(str(path) for path in written))


def _verdict(verdict: Verdict | None) -> str:
    if verdict is None:
        return "not re-run"
    text = f"{verdict.outcome.value}: {verdict.reason} (completed {verdict.completed}, {verdict.steps} steps)"
    return text + (f"; error: {verdict.error}" if verdict.error else "")


def print_reproduction(result: Reproduction, console: Console) -> None:
    """A table of the runs, then every mismatch as lines that never wrap (they are read in logs)."""
    runs = Table("run in bundle", "re-run as", "operator", "checked", "matched", title="reproduce")
    for check in result.runs:
        checked = "yes" if check.deterministic else "no (not deterministic)"
        runs.add_row(
            check.run_id, check.rerun_id, check.operator, checked, f"{check.matched}/{check.episodes}"
        )
    console.print(runs)
    lines = [f"skipped {reason}" for reason in result.skipped]
    for check in result.runs:
        lines += [f"{check.run_id}: forced past a changed input: {change}" for change in check.changed_inputs]
        if check.interrupted:
            lines.append(f"{check.run_id}: interrupted; the runs after it were not re-run")
        for item in check.mismatches if check.deterministic else ():
            lines += [
                f"mismatch: episode {item.episode_id}, task {item.task_id}, repeat {item.repeat} "
                f"(differs: {', '.join(item.differs) or 'not re-run'})",
                f"  expected: {_verdict(item.expected)}",
                f"  got:      {_verdict(item.got)}",
            ]
    verdict = "reproduced" if result.reproduced else "NOT reproduced"
    lines.append(f"{verdict}: {result.matched}/{result.checked} deterministic outcomes match; db {result.db}")
    for line in lines:
        console.print(line, soft_wrap=True, markup=False)


def reproduce(
    bundle: Annotated[Path, typer.Argument(help="a folder written by `susbench results export`")],
    snapshot: Annotated[Path, typer.Option("--snapshot", help="the WACZ the bundle's runs replayed")],
    db: Annotated[
        Path | None,
        typer.Option("--db", help="DuckDB file for the re-run (default: reproduce-<bundle>.duckdb)"),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="run even when the snapshot or other inputs differ, and report")
    ] = False,
    only_run: Annotated[
        str | None, typer.Option("--run", help="re-run only this run of the bundle (id or prefix)")
    ] = None,
    parallel: Annotated[int, typer.Option(min=1, help="episodes at once")] = 2,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON instead of tables")] = False,
) -> None:
    """Re-run a bundle's runs; exit 1 if any outcome of a scripted baseline differs from the stored one."""
    from susbench.controller.reproduce import reproduce_bundle

    console = output_console()
    target = db or Path(f"reproduce-{bundle.resolve().name}.duckdb")
    result = reproduce_bundle(
        bundle,
        snapshot,
        target,
        force=force,
        run=only_run,
        parallel=parallel,
        observe=None if as_json else (lambda operator: ProgressDisplay(operator, console)),
    )
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
    else:
        print_reproduction(result, console)
    if any(check.interrupted for check in result.runs):
        raise typer.Exit(130)
    if not result.reproduced:
        raise typer.Exit(1)
