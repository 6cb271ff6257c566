"""`susbench replay serve` (a proxy a person or agent browses) and `susbench replay check` (coverage)."""

from __future__ import annotations

import json
import threading
from contextlib import suppress
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from replayer.check import check_snapshot
from replayer.proxy import Coverage, ReplayServer
from susbench.errors import SusbenchError
from susbench.models import HostMap

app = typer.Typer(no_args_is_help=True)
console = Console()


def _coverage_table(title: str, rows: list[tuple[str, Coverage]]) -> Table:
    table = Table(title=title)
    for column in ("page", "requests", "exact", "canonical", "fuzzy", "misses", "matched"):
        table.add_column(column, justify="left" if column == "page" else "right")
    for name, cov in rows:
        table.add_row(
            name,
            str(cov.requests),
            str(cov.exact),
            str(cov.canonical),
            str(cov.fuzzy),
            str(cov.miss + cov.live),
            f"{cov.matched_ratio:.1%}",
        )
    return table


@app.command("serve")
def serve(
    snapshot: Annotated[
        Path, typer.Argument(help="a .wacz snapshot, or a .warc/.warc.gz indexed on the fly")
    ],
    port: Annotated[int, typer.Option(help="proxy port on the host (0 = any free port)")] = 8081,
    host: Annotated[str, typer.Option(help="address to listen on")] = "127.0.0.1",
    fallback: Annotated[
        str, typer.Option(help="none: misses get a 404; live: misses go to the web")
    ] = "none",
    resolve: Annotated[
        list[str] | None, typer.Option(help="HOST=IP:PORT for --fallback live, as curl's --resolve")
    ] = None,
) -> None:
    """Serve a snapshot as an HTTP(S) proxy until Ctrl-C, then print its coverage."""
    if fallback not in ("none", "live"):
        raise SusbenchError(f"--fallback {fallback!r}: expected 'none' or 'live'")
    try:
        host_map = HostMap.parse(resolve or [])
    except ValueError as exc:
        raise SusbenchError(str(exc)) from None
    with ReplayServer(snapshot, port=port, host=host, fallback=fallback, resolve=host_map) as server:  # type: ignore[arg-type]
        console.print(f"replaying [bold]{snapshot}[/] on [bold]{server.proxy_url}[/] (fallback: {fallback})")
        console.print("browse it with Chromium started with these flags:")
        console.print("  " + " ".join(server.chromium_flags()), soft_wrap=True, highlight=False)
        console.print("press Ctrl-C to stop")
        with suppress(KeyboardInterrupt):
            threading.Event().wait()
        coverage = server.coverage()
    console.print(_coverage_table("replay coverage", [("all requests", coverage)]))
    for url in coverage.misses:
        console.print(f"  miss: {url}", highlight=False, soft_wrap=True)


@app.command("check")
def check(
    snapshot: Annotated[Path, typer.Argument(help="a .wacz snapshot or a .warc/.warc.gz")],
    as_json: Annotated[bool, typer.Option("--json", help="print JSON instead of a table")] = False,
    timeout_s: Annotated[float, typer.Option("--timeout", help="seconds per page load")] = 30.0,
) -> None:
    """Load every page of the snapshot in headless Chromium through the replayer; report coverage."""
    pages = check_snapshot(snapshot, timeout_s=timeout_s)
    if as_json:
        typer.echo(json.dumps([page.model_dump(mode="json") for page in pages], indent=2))
    else:
        console.print(
            _coverage_table(f"coverage of {snapshot}", [(page.url, page.coverage) for page in pages])
        )
        for page in pages:
            for url in page.coverage.misses:
                console.print(f"  miss on {page.url}: {url}", highlight=False, soft_wrap=True)
            if page.error:
                console.print(f"[red]error on {page.url}: {page.error}[/]", highlight=False)
    if any(page.error for page in pages):
        raise typer.Exit(1)
