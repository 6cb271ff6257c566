"""`susbench replay serve` (a proxy a person or agent browses) and `susbench replay check` (coverage)."""

from __future__ import annotations

import json
import threading
from contextlib import suppress
from pathlib import Path
from typing import Annotated, cast

import typer
from rich.console import Console
from rich.table import Table

from replayer.check import Mode, check_snapshot
from replayer.direct import DirectReplayServer
from replayer.proxy import ReplayServer
from replayer.service import Coverage, ReplayService
from susbench.errors import SusbenchError
from susbench.hostmap import parse_host_map

app = typer.Typer(no_args_is_help=True)
MODES = ("proxy", "direct")
MODE_HELP = "proxy: an HTTP(S) proxy for any browser; direct: every host resolved to the replayer"
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
    port: Annotated[int, typer.Option(help="port on the host (0 = any free port)")] = 8081,
    host: Annotated[str, typer.Option(help="address to listen on")] = "127.0.0.1",
    fallback: Annotated[
        str, typer.Option(help="none: misses get a 404; live: misses go to the web")
    ] = "none",
    resolve: Annotated[
        list[str] | None, typer.Option(help="HOST=IP:PORT for --fallback live, as curl's --resolve")
    ] = None,
    mode: Annotated[str, typer.Option(help=MODE_HELP)] = "proxy",
    session: Annotated[
        str | None, typer.Option(help="answer from this recorded browser session first (a task id)")
    ] = None,
) -> None:
    """Serve a snapshot until Ctrl-C, then print its coverage."""
    if fallback not in ("none", "live"):
        raise SusbenchError(f"--fallback {fallback!r}: expected 'none' or 'live'")
    if mode not in MODES:
        raise SusbenchError(f"--mode {mode!r}: expected 'proxy' or 'direct'")
    if mode == "direct" and fallback != "none":
        raise SusbenchError("--fallback live needs --mode proxy: direct replay has no upstream at all")
    host_map = parse_host_map(resolve or [], "--resolve")
    server: ReplayService = (
        DirectReplayServer(snapshot, port=port, host=host)
        if mode == "direct"
        else ReplayServer(snapshot, port=port, host=host, fallback=fallback, resolve=host_map)  # type: ignore[arg-type]
    )
    with server:
        if session is not None:
            known = sorted({entry.session for entry in server.snapshot.entries() if entry.session})
            if session not in known:
                shown = ", ".join(known[:5]) + (", ..." if len(known) > 5 else "") if known else "none"
                raise SusbenchError(f"--session {session!r}: {snapshot} has no such session (it has {shown})")
            server.new_episode(session)
        where = server.proxy_url or f"{host}:{server.port} (direct)"
        console.print(f"replaying [bold]{snapshot}[/] on [bold]{where}[/] (fallback: {fallback})")
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
    mode: Annotated[str, typer.Option(help=MODE_HELP)] = "proxy",
) -> None:
    """Load every page of the snapshot in headless Chromium through the replayer; report coverage."""
    if mode not in MODES:
        raise SusbenchError(f"--mode {mode!r}: expected 'proxy' or 'direct'")
    pages = check_snapshot(snapshot, timeout_s=timeout_s, mode=cast(Mode, mode))
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
