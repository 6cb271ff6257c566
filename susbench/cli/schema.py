"""`susbench schema`: the JSON Schema of the data models, for whoever writes their files by hand."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from susbench.core.errors import SusbenchError
from susbench.core.models import CapturePlan, Episode, Injection, Outcome, Site, SnapshotManifest, Task
from susbench.results.bundle import ResultManifest

SCHEMA_MODELS = {
    model.__name__: model
    for model in (Site, Task, Injection, CapturePlan, SnapshotManifest, Episode, Outcome, ResultManifest)
}


def schema(
    name: Annotated[str | None, typer.Argument(help=f"one of: {', '.join(SCHEMA_MODELS)}")] = None,
) -> None:
    if name is None:
        document = {key: model.model_json_schema() for key, model in SCHEMA_MODELS.items()}
    elif name in SCHEMA_MODELS:
        document = SCHEMA_MODELS[name].model_json_schema()
    else:
        raise SusbenchError(f"unknown model {name!r}; expected one of: {', '.join(SCHEMA_MODELS)}")
    typer.echo(json.dumps(document, indent=2))
