"""The `susbench` command: one root Typer app mounting each part's commands."""

from __future__ import annotations

import json
import signal
import sys
from typing import Any

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape

from susbench import __version__
from susbench.cli.agents import agents_app, trace
from susbench.cli.analysis import compare, drift, report
from susbench.cli.anchors import anchor
from susbench.cli.container import browser_app, image_app
from susbench.cli.doctor import doctor
from susbench.cli.injections import extension_app, injections_app
from susbench.cli.record import record
from susbench.cli.replay import app as replay_app
from susbench.cli.run import demo, query, reproduce, results_app, run
from susbench.cli.snapshot import snapshot_app
from susbench.cli.study import study_app
from susbench.cli.web import app as web_app
from susbench.core.errors import SusbenchError
from susbench.core.loading import describe_validation_error
from susbench.core.models import CapturePlan, Episode, Injection, Outcome, Site, SnapshotManifest, Task
from susbench.results.bundle import ResultManifest

app = typer.Typer(
    help="SusBench Replay: record sites, replay them frozen, inject dark patterns, measure avoidance.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)
app.add_typer(
    web_app, name="web", help="The local web of synthetic consumer sites (stands in for the live web)."
)
app.command(
    "record",
    help="Record URLs or capture plans into a WACZ snapshot, or each site of a catalog into its own.",
)(record)
app.add_typer(snapshot_app, name="snapshot", help="Inspect, verify and import snapshots (WACZ/WARC).")
app.add_typer(
    replay_app, name="replay", help="Serve a snapshot offline and deterministically; check coverage."
)
app.add_typer(
    injections_app, name="injections", help="Validate, list and preview the dark-pattern injections."
)
injections_app.command(
    "anchor", help="Measure where generic injections land on real pages (saved HTML, WARC/WACZ, URLs)."
)(anchor)
app.add_typer(extension_app, name="extension", help="Build the injection browser extension.")
app.command(
    "demo", help="The embedded default: every task with each scripted baseline, offline, then the report."
)(demo)
app.command("run", help="Run tasks with an operator, live or from a snapshot, into DuckDB.")(run)
app.command("report", help="Avoidance per run configuration, Firth model, Figure 4, HTML.")(report)
app.command("compare", help="Pair two runs: agreement, discordant pairs, McNemar, differences.")(compare)
app.command("drift", help="Drift between two snapshots (or one and the live web), anchors included.")(drift)
app.command("query", help="Run SQL on a results database and print a table.")(query)
app.add_typer(results_app, name="results", help="Export results: Parquet plus a run.json manifest.")
app.command("reproduce", help="Re-run a results bundle on a snapshot; report outcomes that differ.")(
    reproduce
)
app.command("doctor", help="Check Chromium, fonts, CAs, ports, the results folder, extras; say what to fix.")(
    doctor
)
app.add_typer(browser_app, name="browser", help="Find Chromium and print it; `serve` it in a container.")
app.add_typer(
    study_app,
    name="study",
    help="A whole session of one human participant (consent, tasks, questionnaires); `summary`: realism.",
)
app.add_typer(image_app, name="image", help="Build the browser container image (Docker or Podman's API).")
app.command("trace", help="An agent episode's timeline: screenshots with actions drawn, the model's words.")(
    trace
)
app.add_typer(
    agents_app,
    name="agents",
    help="Agents without a vendor: demonstrations and a local scripted model server.",
)

SCHEMA_MODELS = {
    model.__name__: model
    for model in (Site, Task, Injection, CapturePlan, SnapshotManifest, Episode, Outcome, ResultManifest)
}


@app.command("schema", help="Print the JSON Schema of the data models (all, or one by name).")
def schema(name: str = typer.Argument(None, help=f"one of: {', '.join(SCHEMA_MODELS)}")) -> None:
    if name is None:
        document = {key: model.model_json_schema() for key, model in SCHEMA_MODELS.items()}
    elif name in SCHEMA_MODELS:
        document = SCHEMA_MODELS[name].model_json_schema()
    else:
        raise SusbenchError(f"unknown model {name!r}; expected one of: {', '.join(SCHEMA_MODELS)}")
    typer.echo(json.dumps(document, indent=2))


@app.command("version", help="Print the version of SusBench Replay.")
def version() -> None:
    typer.echo(__version__)


def _no_value_shown(ctx: object) -> None:
    return None


def without_flag_types(command: Any) -> Any:
    """Typer labels on/off flags `<bool>` in --help as if they took a value; a flag takes none.

    Typer builds on its own copy of Click, so the command tree is walked by its attributes.
    """
    for param in [*command.params, command.get_help_option(command.context_class(command))]:
        if getattr(param, "is_flag", False) and hasattr(param, "display_type_rich"):
            param.display_type_rich = _no_value_shown
    for sub in getattr(command, "commands", {}).values():
        without_flag_types(sub)
    return command


def main() -> None:
    """Entry point: user errors become one red line and exit code 2, never a traceback."""
    try:
        code = without_flag_types(typer.main.get_command(app))(standalone_mode=False)
    except SusbenchError as exc:
        Console(stderr=True).print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)
        sys.exit(2)
    except ValidationError as exc:
        # A command-line value a model refuses (e.g. --width 5): named, without pydantic's URL.
        message = describe_validation_error("command line", exc)
        Console(stderr=True).print(f"[bold red]error:[/] {escape(message)}", highlight=False)
        sys.exit(2)
    except (typer.Abort, KeyboardInterrupt) as exc:
        Console(stderr=True).print("[yellow]aborted[/]")
        sys.exit(128 + getattr(exc, "signum", signal.SIGINT))
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.TyperException as exc:
        # Usage errors (bad option values, missing arguments) carry their own message and exit code.
        show = getattr(exc, "show", None)
        if show is None:
            raise
        show()
        sys.exit(getattr(exc, "exit_code", 2))
    if isinstance(code, int) and code:
        sys.exit(code)  # a command's `typer.Exit(code)`, returned rather than raised outside standalone mode
