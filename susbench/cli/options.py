"""Options several commands share, each declared once; and options derived from a model's fields, so a
command's option and the field it fills cannot disagree on type, default, bounds or help."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from copy import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, get_args

import typer
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from susbench.catalog.tasks import complete_tasks
from susbench.core.paths import DEFAULT_DB, complete_snapshots

DB_HELP = "DuckDB results file"

DbOption = Annotated[Path, typer.Option("--db", help=DB_HELP)]
SnapshotOption = Annotated[
    Path | None,
    typer.Option(help="WACZ to replay (default: the bundled one)", autocompletion=complete_snapshots),
]
TasksOption = Annotated[
    str,
    typer.Option(
        help="all, a task id, a site host, a pattern type or a glob over ids", autocompletion=complete_tasks
    ),
]
TaskSetOption = Annotated[
    str,
    typer.Option(
        "--task-set",
        help="localweb: tasks/ on the bundled snapshot; realpages: tasks/realpages/ on real pages, their "
        "snapshot built once from ../shared/realdata into the cache; or a folder of task files "
        "(with --snapshot)",
    ),
]
InjectionsOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--injections", help="a folder of further injections beside the project's catalog (repeatable)"
    ),
]
GenericInjectionsOption = Annotated[
    str,
    typer.Option("--injections", help="generic injections: all, ids, types or id globs, comma-separated"),
]
JsonOption = Annotated[
    bool,
    typer.Option(
        "--json",
        help="print one JSON document instead of tables: an array for a listing, an object for a report",
    ),
]
OperatorConfigOption = Annotated[
    Path | None, typer.Option(help="agents: a YAML file of further settings (docs/agents.md)")
]
ServeOption = Annotated[
    bool,
    typer.Option("--serve", help="the screen on a virtual display, for a remote participant (noVNC link)"),
]
ServePortOption = Annotated[
    int | None, typer.Option(min=0, max=65535, help="--serve: port of the link (default 6080)")
]
ServeHostOption = Annotated[str | None, typer.Option(help="--serve: address to listen on (127.0.0.1)")]

__all__ = ["DEFAULT_DB"]


@dataclass(frozen=True)
class Flag:
    """How one field of a model is asked for on the command line; its type, default, bounds and help
    are the field's."""

    panel: str
    name: str | None = None
    """the option's spelling when it is not the field's (`--step-timeout` for `step_timeout_s`)"""
    annotation: Any = None
    """a type the command line parses, when the field's is not one (a list for a tuple)"""
    parser: Callable[[str], Any] | None = None
    completion: Callable[[str], list[str]] | None = None
    metavar: str | None = None
    help: str | None = None
    """what the field's description leaves out on the command line (the operators installed)"""


def _bounds(field: FieldInfo) -> dict[str, float]:
    bounds: dict[str, float] = {}
    for item in field.metadata:
        for attribute, key in (("ge", "min"), ("gt", "min"), ("le", "max"), ("lt", "max")):
            if getattr(item, attribute, None) is not None:
                bounds[key] = getattr(item, attribute)
    return bounds


def model_options(model: type[BaseModel], flags: Mapping[str, Flag]) -> list[inspect.Parameter]:
    """One Typer parameter per named field of `model`, named as the field (so the values pass straight
    into the model), with the field's type, default, bounds and description."""
    parameters = []
    for name, flag in flags.items():
        field = model.model_fields[name]
        described = " ".join(text for text in (field.description, flag.help) if text)
        info = typer.Option(
            *([flag.name] if flag.name else []),
            help=described,
            parser=flag.parser,
            autocompletion=flag.completion,
            metavar=flag.metavar,
            **_bounds(field),
        )
        default = (
            inspect.Parameter.empty if field.is_required() else field.get_default(call_default_factory=True)
        )
        if isinstance(default, tuple):
            default = list(default)
        annotation = Annotated[flag.annotation or field.annotation, info]
        parameters.append(option(name, annotation, default, panel=flag.panel))
    return parameters


def option(
    name: str, annotation: Any, default: Any = inspect.Parameter.empty, panel: str | None = None
) -> inspect.Parameter:
    """A command's parameter from an `Annotated[type, typer.Option(...)]`, shown in `panel` of --help."""
    kind, info = get_args(annotation)
    if panel is not None:
        info = copy(info)
        info.rich_help_panel = panel
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=Annotated[kind, info]
    )


def takes(*parameters: inspect.Parameter) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Gives a command written as `def command(**given)` the parameters Typer reads from a signature."""

    def apply(command: Callable[..., None]) -> Callable[..., None]:
        command.__signature__ = inspect.Signature(list(parameters), return_annotation=None)  # type: ignore[attr-defined]
        command.__annotations__ = {parameter.name: parameter.annotation for parameter in parameters}
        return command

    return apply
