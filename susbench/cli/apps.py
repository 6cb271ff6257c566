"""`susbench apps`: list, install, serve and record the real web applications."""

from __future__ import annotations

import json
from datetime import date as Date
from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer

from susbench.cli.options import JsonOption
from susbench.cli.web import print_route, wait_for_interrupt
from susbench.web.edition import DEFAULT_DATE

app = typer.Typer(help="Real web applications run here as the live web.", no_args_is_help=True)

DateOption = Annotated[
    datetime | None,
    typer.Option(
        formats=["%Y-%m-%d"],
        help=f"site date YYYY-MM-DD (drives prices, stock, headlines); default {DEFAULT_DATE}",
    ),
]
SeedOption = Annotated[int, typer.Option(help="seed of the generated content")]

# The apps' drivers and the recorder (mitmproxy, Playwright) are imported by the commands that use them.


def _day(value: datetime | None) -> Date:
    return value.date() if value else DEFAULT_DATE


@app.command("list")
def list_apps(as_json: JsonOption = False) -> None:
    """Every app: its software, version, stack, registry, licence, category, hostnames, and whether it
    is installed here."""
    from susbench.apps import driver, load_specs

    rows = [
        spec.model_dump(mode="json", exclude={"needs", "start_path"})
        | {"start_url": spec.start_url, "installed": driver(spec.name).installed()}
        for spec in load_specs()
    ]
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    for row in rows:
        state = "installed" if row["installed"] else "not installed (make apps)"
        typer.echo(
            f"{row['name']:<10} {row['title']} {row['version']} ({row['stack']}, {row['source']}, "
            f"{row['licence']}) {row['category']:<12} {', '.join(row['hosts'])}  {state}"
        )


@app.command()
def install(
    names: Annotated[list[str] | None, typer.Argument(help="apps to install (default: every app)")] = None,
) -> None:
    """Install apps from their package registry into the cache (~/.cache/susbench/apps/<app>); an
    installed app costs nothing."""
    from susbench.apps import driver, load_specs

    for name in names or [spec.name for spec in load_specs()]:
        chosen = driver(name)
        if chosen.installed():
            typer.echo(f"{name}: installed")
            continue
        typer.echo(f"{name}: installing {chosen.spec.title} {chosen.spec.version} from {chosen.spec.source}")
        chosen.install(lambda line, name=name: typer.echo(f"{name}: {line}"))
        typer.echo(f"{name}: installed")


@app.command()
def serve(
    name: Annotated[str, typer.Argument(help="the app (susbench apps list)")],
    port: Annotated[int, typer.Option(help="loopback port serving HTTP and HTTPS")] = 8443,
    host: Annotated[str, typer.Option(help="address to bind")] = "127.0.0.1",
    date: DateOption = None,
    seed: SeedOption = 0,
) -> None:
    """Serve the app under its hostnames until Ctrl-C, printing URLs, Chromium flags and the host
    map, as `susbench web serve` does (record, run --live, compare and drift work the same)."""
    from susbench.apps import serve_app

    day = _day(date)
    with serve_app(
        name, day, seed, port=port, host=host, log=lambda line: typer.echo(f"{name}: {line}")
    ) as served:
        front = served.front
        typer.echo(f"{served.driver.spec.title} on {front.loopback}:{front.port} (date {day}, seed {seed})")
        print_route(front, [(host_name, front.url(host_name)) for host_name in front.hosts])
        wait_for_interrupt()


@app.command()
def record(
    name: Annotated[str, typer.Argument(help="the app (susbench apps list)")],
    date: DateOption = None,
    seed: SeedOption = 0,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="snapshot to write (default snapshots/apps/<app>-<date>.wacz)"),
    ] = None,
    tasks: Annotated[
        str, typer.Option(help="all, a task id, a pattern type or a glob over the app's task ids")
    ] = "all",
) -> None:
    """Serve the app and record every one of its tasks' capture plans into one WACZ, with the app's
    content digest beside it (<snapshot>.json)."""
    from susbench.apps.record import record_app

    day = _day(date)
    written = record_app(name, day, seed, out, log=lambda line: typer.echo(f"{name}: {line}"), selector=tasks)
    typer.echo(f"wrote {written.snapshot} and {written.manifest}")
