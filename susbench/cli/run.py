"""`susbench run`, `demo` and `reproduce`: run the benchmark (or a bundle's runs again) with a progress bar.

`run`'s options are the fields of `RunOptions` (and of the operator's and the backend's settings),
derived from them: their types, defaults, bounds and help are declared once, in those models.
"""

from __future__ import annotations

import signal
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

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

from susbench.catalog.tasks import complete_tasks
from susbench.catalog.tasksets import DEMO, FULL, task_set, task_set_snapshot
from susbench.cli.options import (
    DB_HELP,
    Flag,
    JsonOption,
    OperatorConfigOption,
    ServeHostOption,
    ServeOption,
    ServePortOption,
    TaskSetOption,
    model_options,
    option,
    takes,
)
from susbench.cli.terminal import ShownProgress, output_console
from susbench.controller.options import RunOptions
from susbench.core.errors import InputError, SusbenchError
from susbench.core.loading import read_data_file
from susbench.core.models import SplitChoice
from susbench.core.paths import complete_snapshots
from susbench.core.tables import counted
from susbench.distributed.backend import BackendOptions, local_parallel, open_backend
from susbench.operators import BASELINES, complete_operators, operator_names
from susbench.operators.base import OperatorSettings

# The options are the models' fields; what runs (the controller, Playwright, DuckDB, the local model)
# is imported in the commands' bodies, so `run --help` loads none of it.
if TYPE_CHECKING:
    from susbench.controller import ExecutorFactory, RunSummary
    from susbench.controller.catalog_runs import CatalogPart
    from susbench.controller.reproduce import Reproduction
    from susbench.records.episode import EpisodeRecord
    from susbench.results.bundle import Verdict

CATALOG_WIDE = (FULL, DEMO)
STOPPING_NOTICE = (
    "stopping: closing the running episodes' browsers (stored episodes are kept; the same command resumes)"
)


class ProgressDisplay(ShownProgress):
    """The run's progress bar; in a log (not a terminal) one line per stored episode instead."""

    def __init__(self, operator: str, console: Console) -> None:
        super().__init__(
            Progress(
                TextColumn("[bold]{task.fields[operator]}[/]"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[outcomes]}"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=console,
            )
        )
        self._operator = operator
        self._bar = self._progress.add_task("run", total=0, operator=operator, outcomes="")

    def started(self, summary: RunSummary) -> None:
        self._show()
        if summary.notice:
            self._progress.console.print(summary.notice, style="yellow", soft_wrap=True)
        todo = summary.planned - summary.skipped
        self._progress.update(self._bar, total=todo)
        if todo:
            self._progress.console.print(f"{todo} episode{'s' * (todo != 1)} to run: starting the browsers")

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


def _destinations(options: RunOptions) -> str:
    """Where this run writes, so no file appears in the current folder unannounced."""
    from susbench.results.store import archive_folder, trace_folder

    where = f"results: {options.db.resolve()}"
    if options.live:
        where += f"; each live episode archived in {archive_folder(options.db).resolve()}/"
    traces = trace_folder(options.db)
    if traces.is_dir():
        where += f"; agent traces in {traces.resolve()}/"
    return where


def operator_help() -> str:
    """Every operator by name, so `run --help` lists those installed as plugins too."""
    under_test = [name for name in operator_names() if name not in BASELINES and name != "idle"]
    return (
        f"(scripted baselines: {', '.join(BASELINES)}; under test: {', '.join(under_test)}; idle never acts)"
    )


WHAT, HOW, AGENTS, WHERE, SEAT = (
    "What to run",
    "How it runs",
    "Operators under test (agents)",
    "Where the browsers run",
    "A remote participant",
)
RUN_FLAGS = {
    "operator": Flag(WHAT, completion=complete_operators, help=operator_help()),
    "tasks": Flag(WHAT, completion=complete_tasks),
    "split": Flag(WHAT),
    "snapshot": Flag(WHAT, completion=complete_snapshots),
    "live": Flag(WHAT, name="--live"),
    "live_resolve": Flag(WHAT, annotation=list[str], metavar="HOST[:PORT]=IP:PORT"),
    "live_date": Flag(WHAT, parser=date.fromisoformat, metavar="YYYY-MM-DD"),
    "repeats": Flag(WHAT),
    "seed": Flag(WHAT),
    "control_rate": Flag(WHAT),
    "control": Flag(WHAT),
    "redraw_injections": Flag(WHAT, name="--redraw-injections"),
    "db": Flag(HOW),
    "step_timeout_s": Flag(HOW, name="--step-timeout"),
    "episode_timeout_s": Flag(HOW, name="--episode-timeout"),
    "headless": Flag(HOW, name="--headless/--headed"),
    "replay_mode": Flag(HOW),
    "browser": Flag(WHERE),
    "image": Flag(WHERE),
    "extra_injections": Flag(WHAT, name="--injections", annotation=list[Path]),
}
"""The options of `susbench run` that are fields of `RunOptions` (`tasks_dir` comes from --task-set,
`parallel` from the backend, `operator_settings` from the agents' options)."""
SETTINGS_FLAGS = {
    name: Flag(AGENTS) for name in ("model", "base_url", "observation", "max_steps", "action_format")
}
BACKEND_FLAGS = {name: Flag(WHERE) for name in ("backend", "ray_address", "browsers_per_node")}
DEMO_PARALLEL = 2
PARALLEL_HELP = (
    f"episodes at once on the local backend (default: run {RunOptions.model_fields['parallel'].default}, "
    f"demo {DEMO_PARALLEL}); on Ray, a node runs as many as it has browsers"
)
WHERE_OPTIONS = (
    option("parallel", Annotated[int | None, typer.Option(min=1, help=PARALLEL_HELP)], None, panel=WHERE),
    *model_options(BackendOptions, BACKEND_FLAGS),
    option("task_set", TaskSetOption, "localweb", panel=WHAT),
)


@takes(
    *model_options(RunOptions, RUN_FLAGS),
    *model_options(OperatorSettings, SETTINGS_FLAGS),
    option("operator_config", OperatorConfigOption, None, panel=AGENTS),
    *WHERE_OPTIONS,
    option("serve", ServeOption, False, panel=SEAT),
    option("port", ServePortOption, None, panel=SEAT),
    option("host", ServeHostOption, None, panel=SEAT),
)
def run(**given: Any) -> None:
    """Run tasks with an operator; re-running the same command resumes where it stopped."""
    from susbench.controller.stopping import stopping_on_signals
    from susbench.people.remote import remote_screen

    console = output_console()
    serve, port, host = given.pop("serve"), given.pop("port"), given.pop("host")
    if given["task_set"] in CATALOG_WIDE:
        planned, where = catalog_run_options(given, console)
    else:
        options, where = run_options(given)
        planned = [("", options)]
    summaries: list[tuple[RunOptions, RunSummary]] = []
    with (
        stopping_on_signals(STOPPING_NOTICE),
        remote_screen(serve, port, host, where.backend, planned[0][1].operator, console),
        open_backend(where) as executor,
    ):
        for label, options in planned:
            if label:
                console.print(f"[bold]{label}[/]")
            console.print(_destinations(options), soft_wrap=True)
            summary = _run_with_progress(options, console, executor)
            summaries.append((options, summary))
            if summary.interrupted:
                break
    console.print(_destinations(planned[-1][1]), soft_wrap=True)
    codes = [_print_summary(options, summary, console) for options, summary in summaries]
    if any(codes):
        raise typer.Exit(max(codes))


def _print_summary(options: RunOptions, summary: RunSummary, console: Console) -> int:
    """One line per run; the exit code it asks for (interrupted: 128 + signal; all errors: 1)."""
    outcomes = ", ".join(f"{kind} {count}" for kind, count in sorted(summary.outcomes.items())) or "none"
    console.print(
        f"{summary.run_id}: {counted(summary.stored, 'episode')} stored, {summary.skipped} already stored "
        f"(of {summary.planned}); outcomes: {outcomes}",
        soft_wrap=True,
    )
    if summary.interrupted:
        return 128 + (summary.stop_signal or signal.SIGINT)
    if summary.failed:
        console.print(
            f"[bold red]failed:[/] every episode of this run ended in error (their errors: `susbench "
            f'query "SELECT episode_id, error FROM episode_outcomes" --db {options.db}`); the same command '
            "retries them",
            soft_wrap=True,
        )
        return 1
    return 0


def catalog_parts(name: str, selector: str, split: SplitChoice, console: Console) -> list[CatalogPart]:
    """The task sets and tasks of `--task-set full` or `demo` (the demo's subset unless --tasks
    names tasks: then those of the full catalog)."""
    from susbench.catalog.injections import load_injections
    from susbench.controller.catalog_runs import demo_parts, full_parts, saved_pages_available

    injections = {item.id: item for item in load_injections()}
    if name == FULL or selector != "all":
        return full_parts(injections, selector, split)
    if not saved_pages_available():
        console.print("the saved real pages are left out: their data (../shared/realdata) is not here")
    parts = [part.in_split(split) for part in demo_parts(injections)]
    return [part for part in parts if part.tasks]


def catalog_run_options(
    given: dict[str, Any], console: Console
) -> tuple[list[tuple[str, RunOptions]], BackendOptions]:
    """`--task-set full` or `demo`: one run per task set, each on its own snapshot; how long they
    will take is printed before any starts (or any snapshot is built)."""
    from susbench.controller.catalog_runs import describe_estimate, estimate, stored_episode_time

    if given["live"] or given["snapshot"] is not None:
        raise SusbenchError(
            f"--task-set {given['task_set']} replays each task set from its own snapshot; expected no --live "
            "or --snapshot"
        )
    parts = catalog_parts(given["task_set"], given["tasks"], given["split"], console)
    where = BackendOptions(**{name: given[name] for name in BACKEND_FLAGS})
    parallel = local_parallel(where, given["parallel"], default=RunOptions.model_fields["parallel"].default)
    db, operator = given["db"], given["operator"]
    mean, stored = stored_episode_time(db, operator)
    found = estimate(operator, parts, parallel, given["repeats"], mean, stored)
    console.print(describe_estimate(found, parallel, len(parts)), soft_wrap=True)
    planned = []
    for part in parts:
        options, where = run_options(
            {**given, "task_set": part.task_set.name, "tasks": part.selector, "snapshot": None}
        )
        planned.append((part.label, options))
    return planned, where


def run_options(given: dict[str, Any]) -> tuple[RunOptions, BackendOptions]:
    """What `susbench run` was asked, as the controller takes it: the options named as `RunOptions`'
    fields pass straight in; the task set, the backend and the agents' settings are resolved here."""
    where = BackendOptions(**{name: given[name] for name in BACKEND_FLAGS})
    tasks_dir, snapshot = _task_set_inputs(given["task_set"], given["snapshot"], given["live"])
    settings = operator_settings({name: given[name] for name in SETTINGS_FLAGS}, given["operator_config"])
    parallel = local_parallel(where, given["parallel"], default=RunOptions.model_fields["parallel"].default)
    asked = {name: given[name] for name in RUN_FLAGS} | {"snapshot": snapshot}
    options = RunOptions(**asked, tasks_dir=tasks_dir, parallel=parallel, operator_settings=settings)
    return options, where


def operator_settings(given: dict[str, Any], config: Path | None) -> OperatorSettings:
    """The operator's settings from the command line and its `--operator-config` file."""
    data = {} if config is None else read_data_file(config)
    if not isinstance(data, dict):
        raise InputError(f"{config}: expected a mapping of settings, got {type(data).__name__}")
    return OperatorSettings(
        **given, config=data, config_source=str(config) if config else "--operator-config"
    )


def _task_set_inputs(name: str, snapshot: Path | None, live: bool) -> tuple[Path, Path | None]:
    """The task set's folder and the snapshot to replay (the one given, else the set's own)."""
    chosen = task_set(name)
    if live and chosen.built:
        raise SusbenchError(f"--task-set {name} replays recorded real pages only; expected no --live")
    if snapshot is None and not live:
        snapshot = task_set_snapshot(chosen)
    return chosen.tasks_dir, snapshot


@takes(
    option(
        "db",
        Annotated[Path | None, typer.Option(help=f"{DB_HELP} (default: demo-<today>.duckdb)")],
        None,
        panel=HOW,
    ),
    *model_options(RunOptions, {name: RUN_FLAGS[name] for name in ("tasks", "snapshot", "browser", "image")}),
    *WHERE_OPTIONS[:-1],
    option("task_set", TaskSetOption, DEMO, panel=WHAT),
    option(
        "local_model",
        Annotated[
            bool | None,
            typer.Option(
                "--local-model/--no-local-model",
                help="also run the packaged small model (openai-chat on a local llama.cpp server) on the "
                "nine one-per-type tasks (or on --tasks); default: when the local-model extra is installed",
            ),
        ],
        None,
        panel=WHAT,
    ),
)
def demo(**given: Any) -> None:
    """The demo's balanced subset of the catalog (or --tasks of it, or --task-set) once with each
    scripted baseline, offline from the bundled snapshots, then the report (printed, and as Figure 4
    with report.html in <db name>-report/ beside the database)."""
    from susbench.agents.local_model import local_model_missing, local_run_fields, serving_for_run
    from susbench.analysis.report import render_report, write_report_folder
    from susbench.controller.catalog_runs import describe_estimate, estimate, stored_episode_time
    from susbench.results.store import Store

    db = given["db"] or Path(f"demo-{date.today().isoformat()}.duckdb")
    console = output_console()
    where = BackendOptions(**{name: given[name] for name in BACKEND_FLAGS})
    at_once = local_parallel(where, given["parallel"], default=DEMO_PARALLEL)
    with_model = given["local_model"]
    if with_model is None:
        missing = local_model_missing()
        with_model = missing is None
        if missing is not None:
            console.print(f"the local model's row is left out: {missing} (`make local-model` adds it)")
    shared = {"db": db, "browser": given["browser"], "image": given["image"]}
    catalog_wide = given["task_set"] in CATALOG_WIDE
    if catalog_wide:
        if given["snapshot"] is not None:
            raise SusbenchError(
                f"--task-set {given['task_set']} replays each task set from its own snapshot; expected no "
                "--snapshot"
            )
        parts = catalog_parts(given["task_set"], given["tasks"], "all", console)
        mean, stored = stored_episode_time(db, "naive")
        baselines = estimate("naive", parts, at_once, 1, mean, stored)
        console.print(
            f"the baselines: 3 x {describe_estimate(baselines, at_once, len(parts))}", soft_wrap=True
        )
        plan = [(part.label, part.selector, part.task_set.name) for part in parts]
    else:
        plan = [("", given["tasks"], given["task_set"])]
    with open_backend(where) as executor:
        for operator in ("naive", "careful", "random"):
            for label, selector, set_name in plan:
                console.print(f"[bold]{operator}[/]" + (f" on {label}" if label else ""))
                tasks_dir, snapshot = _task_set_inputs(set_name, given["snapshot"], live=False)
                options = RunOptions(
                    tasks=selector,
                    operator=operator,
                    parallel=at_once,
                    snapshot=snapshot,
                    tasks_dir=tasks_dir,
                    **shared,
                )
                _run_with_progress(options, console, executor)
        if with_model:
            # the model's nine one-per-type tasks are the local web's (or --tasks, in one task set)
            model_set = "localweb" if catalog_wide else given["task_set"]
            tasks_dir, snapshot = _task_set_inputs(model_set, given["snapshot"], live=False)
            with serving_for_run() as server:
                console.print(f"[bold]openai-chat ({server.model}, on this CPU)[/]")
                model_tasks = None if given["tasks"] == "all" or catalog_wide else given["tasks"]
                chosen = RunOptions(
                    **local_run_fields(server, tasks=model_tasks),
                    snapshot=snapshot,
                    tasks_dir=tasks_dir,
                    **shared,
                )
                _run_with_progress(chosen, console, executor)
    with Store(db, read_only=True) as store:
        report, written = write_report_folder(store, db.parent / f"{db.stem}-report", pool=len(plan) > 1)
    console.print(render_report(report))
    console.print(f'results: {db}  (try `susbench query "SELECT * FROM episode_outcomes LIMIT 5" --db {db}`)')
    # a group's three-panel figure is the PNG with its caption beside it; its panels have none
    figure = ", ".join(
        str(path) for path in written if path.suffix == ".png" and path.with_suffix(".txt") in written
    )
    console.print(f"report: {written[-1]}  (Figure 4: {figure or 'no injected episodes to plot'})")


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
    as_json: JsonOption = False,
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
