"""`susbench query` and `susbench results export`: read a results database, or bundle it for others."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from susbench.cli.options import DEFAULT_DB, DbOption, JsonOption
from susbench.cli.terminal import output_console
from susbench.core.errors import SusbenchError
from susbench.core.tables import FittedTable

# DuckDB and the scoring are imported in the commands' bodies: `--help` loads neither.

# DuckDB's own names for unaliased aggregates, as a reader would write them.
READABLE_COLUMNS = {"count_star()": "count"}

results_app = typer.Typer(no_args_is_help=True)


def query(
    sql: Annotated[
        str, typer.Argument(help='SQL, e.g. "SELECT outcome, count(*) FROM episode_outcomes GROUP BY 1"')
    ],
    db: DbOption = DEFAULT_DB,
    as_json: JsonOption = False,
) -> None:
    """Run SQL on a results database and print a table."""
    from susbench.results.store import Store

    with Store(db, read_only=True) as store:
        names, rows = store.query(sql)
    columns = [READABLE_COLUMNS.get(name, name) for name in names]
    if as_json:
        typer.echo(json.dumps([dict(zip(columns, row, strict=True)) for row in rows], default=str, indent=2))
        return
    cells = [["NULL" if value is None else str(value) for value in row] for row in rows]
    output_console().print(FittedTable(columns, cells, caption=f"{len(rows)} rows"))


@results_app.command("export")
def export(
    parquet: Annotated[
        Path,
        typer.Option("--parquet", help="folder for the bundle: one Parquet file per table/view + run.json"),
    ],
    db: DbOption = DEFAULT_DB,
) -> None:
    """Export every table and view as Parquet, with run.json: how to re-run each run (`reproduce`)."""
    from susbench.results.bundle import export_bundle
    from susbench.results.store import Store

    if parquet.exists() and not parquet.is_dir():
        raise SusbenchError(f"{parquet}: is a file; expected a folder for the Parquet files")
    with Store(db, read_only=True) as store:
        written = export_bundle(store, parquet)
    output_console().print("\n".join(str(path) for path in written))


def rescore(db: DbOption = DEFAULT_DB, as_json: JsonOption = False) -> None:
    """Score every stored outcome again, offline, from the signed evidence it was computed from, with the
    current scoring rules (the extension's own, in Node): which changed and why; nothing is deleted."""
    from susbench.results.rescore import rescore_store

    done = rescore_store(db)
    if as_json:
        typer.echo(done.model_dump_json(indent=2))
        return
    console = output_console()
    console.print(
        f"{done.rescore_id}: {done.scored} outcomes scored with rules {done.rules_version}; "
        f"{len(done.changed)} changed, {len(done.unscored)} not re-scored"
        + (f", {done.classified} newly classified by how they were decided" if done.classified else "")
    )
    if done.changed:
        cells = [[change.episode_id, change.why] for change in done.changed]
        console.print(FittedTable(["episode", "changed"], cells, caption="changed outcomes"))
    if done.unscored:
        cells = [[item.episode_id, item.outcome.value, item.why] for item in done.unscored]
        console.print(FittedTable(["episode", "kept", "why not re-scored"], cells, caption="not re-scored"))
