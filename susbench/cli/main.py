"""The `susbench` command: one root group naming every command, each imported only when it runs.

`susbench --help` and `susbench version` load no part of the benchmark: a command's module (and so
mitmproxy, Playwright, DuckDB, scipy) is imported when that command is invoked or completed.
"""

from __future__ import annotations

import importlib
import signal
import sys
from dataclasses import dataclass
from typing import Any

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape
from typer.core import TyperCommand, TyperGroup

from susbench import __version__
from susbench.core.errors import SusbenchError
from susbench.core.loading import describe_validation_error

RECORD, RUN, RESULTS, MACHINE = "Record and replay", "Run", "Results and analysis", "This machine"


@dataclass(frozen=True)
class Entry:
    """A root command: where it lives (`module:attribute`, a Typer app or a function) and its help."""

    target: str
    help: str
    panel: str

    def load(self, name: str) -> Any:
        module, _, attribute = self.target.partition(":")
        found = getattr(importlib.import_module(module), attribute)
        if isinstance(found, typer.Typer):
            group = typer.main.get_group(found)
            group.name, group.help, group.rich_help_panel = name, self.help, self.panel
            return group
        single = typer.Typer(add_completion=False, rich_markup_mode="rich")
        single.command(name, help=self.help, rich_help_panel=self.panel)(found)
        return typer.main.get_command(single)

    def listed(self, name: str) -> TyperCommand:
        """A stand-in that only shows the help, for --help and completion of the command's name."""
        return TyperCommand(name=name, help=self.help, rich_help_panel=self.panel)


COMMANDS = {
    "web": Entry(
        "susbench.cli.web:app",
        "The local web of synthetic consumer sites (stands in for the live web).",
        RECORD,
    ),
    "apps": Entry(
        "susbench.cli.apps:app",
        "Real web applications (a shop, a news site, a publication) run here as the live web.",
        RECORD,
    ),
    "record": Entry(
        "susbench.cli.record:record",
        "Record URLs or capture plans into a WACZ snapshot, or each site of a catalog into its own.",
        RECORD,
    ),
    "snapshot": Entry(
        "susbench.cli.snapshot:snapshot_app", "Inspect, verify and import snapshots (WACZ/WARC).", RECORD
    ),
    "replay": Entry(
        "susbench.cli.replay:app", "Serve a snapshot offline and deterministically; check coverage.", RECORD
    ),
    "injections": Entry(
        "susbench.cli.injections:injections_app",
        "Validate, list, preview and draft the dark-pattern injections; measure where they anchor.",
        RUN,
    ),
    "extension": Entry(
        "susbench.cli.injections:extension_app", "Build the injection browser extension.", RUN
    ),
    "tasks": Entry(
        "susbench.cli.tasks:tasks_app", "Draft tasks for a recording: checked, in the page's own words.", RUN
    ),
    "demo": Entry(
        "susbench.cli.run:demo",
        "The embedded default: every task with each scripted baseline, offline, then the report.",
        RUN,
    ),
    "run": Entry(
        "susbench.cli.run:run", "Run tasks with an operator, live or from a snapshot, into DuckDB.", RUN
    ),
    "study": Entry(
        "susbench.cli.study:study_app",
        "A whole session of one human participant (consent, tasks, questionnaires); `summary`: realism.",
        RUN,
    ),
    "agents": Entry(
        "susbench.cli.agents:agents_app",
        "Agents without a vendor: demonstrations and a local scripted model server.",
        RUN,
    ),
    "report": Entry(
        "susbench.cli.analysis:report",
        "Avoidance per run configuration, Firth model, Figure 4, HTML.",
        RESULTS,
    ),
    "compare": Entry(
        "susbench.cli.analysis:compare",
        "Pair two runs: agreement, discordant pairs, McNemar, differences.",
        RESULTS,
    ),
    "drift": Entry(
        "susbench.cli.analysis:drift",
        "Drift between two snapshots (or one and the live web), anchors included.",
        RESULTS,
    ),
    "query": Entry("susbench.cli.results:query", "Run SQL on a results database and print a table.", RESULTS),
    "results": Entry(
        "susbench.cli.results:results_app", "Export results: Parquet plus a run.json manifest.", RESULTS
    ),
    "rescore": Entry(
        "susbench.cli.results:rescore",
        "Score every stored outcome again from its signed evidence with the current rules.",
        RESULTS,
    ),
    "plan": Entry(
        "susbench.cli.analysis:plan",
        "How many episodes per pattern type a study needs to detect a difference (power).",
        RESULTS,
    ),
    "reproduce": Entry(
        "susbench.cli.run:reproduce",
        "Re-run a results bundle on a snapshot; report outcomes that differ.",
        RESULTS,
    ),
    "trace": Entry(
        "susbench.cli.agents:trace",
        "An agent episode's timeline: screenshots with actions drawn, the model's words.",
        RESULTS,
    ),
    "schema": Entry(
        "susbench.cli.schema:schema",
        "Print the JSON Schema of the data models (all, or one by name).",
        RESULTS,
    ),
    "doctor": Entry(
        "susbench.cli.doctor:doctor",
        "Check Chromium, fonts, CAs, ports, the results folder, extras; say what to fix.",
        MACHINE,
    ),
    "browser": Entry(
        "susbench.cli.container:browser_app",
        "Find Chromium and print it; `serve` it in a container.",
        MACHINE,
    ),
    "image": Entry(
        "susbench.cli.container:image_app",
        "Build the browser container image (Docker or Podman's API).",
        MACHINE,
    ),
}


class LazyCommands(TyperGroup):
    """The root group: lists every command from `COMMANDS`, imports one only to run or complete it."""

    listing = False

    def list_commands(self, ctx: Any) -> list[str]:
        return [*COMMANDS, *super().list_commands(ctx)]

    def get_command(self, ctx: Any, name: str) -> Any:
        if name not in COMMANDS:
            return super().get_command(ctx, name)
        if self.listing:
            return COMMANDS[name].listed(name)
        if name not in self.commands:
            self.commands[name] = without_flag_types(COMMANDS[name].load(name))
        return self.commands[name]

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self.listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self.listing = False

    def shell_complete(self, ctx: Any, incomplete: str) -> Any:
        self.listing = True
        try:
            return super().shell_complete(ctx, incomplete)
        finally:
            self.listing = False


app = typer.Typer(
    cls=LazyCommands,
    help="SusBench Replay: record sites, replay them frozen, inject dark patterns, measure avoidance.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)


@app.callback()
def root() -> None:
    """SusBench Replay: record sites, replay them frozen, inject dark patterns, measure avoidance."""


@app.command("version", help="Print the version of SusBench Replay.", rich_help_panel=MACHINE)
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
        Console(stderr=True).print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        sys.exit(2)
    except ValidationError as exc:
        # A command-line value a model refuses (e.g. --width 5): named, without pydantic's URL.
        message = describe_validation_error("command line", exc)
        Console(stderr=True).print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
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
