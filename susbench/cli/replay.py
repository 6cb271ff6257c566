"""`susbench replay serve` (a proxy a person or agent browses) and `susbench replay check` (coverage)."""

from __future__ import annotations

import json
import signal
import threading
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, cast

import typer
from rich.console import Console

from susbench.browser import QUIET_FLAGS
from susbench.cli.options import JsonOption
from susbench.cli.terminal import json_words, progress_lines, shell_words
from susbench.core.errors import SusbenchError
from susbench.core.paths import complete_snapshots
from susbench.core.tables import FittedTable

# The replayer (mitmproxy, Playwright) is imported when a command runs: `--help` loads none of it.
if TYPE_CHECKING:
    from collections.abc import Iterator

    from susbench.replayer.check import Mode
    from susbench.replayer.service import Coverage, ReplayLogEntry, ReplayService

app = typer.Typer(no_args_is_help=True)
MODES = ("proxy", "direct")
MODE_HELP = "proxy: an HTTP(S) proxy for any browser; direct: every host resolved to the replayer"
console = Console()


COVERAGE_LEGEND = "req: the pages' requests; bg: Chromium's own requests, not in hit % (— if none)"
LOG_POLL_S = 0.25


def _coverage_table(title: str, rows: list[tuple[str, Coverage]]) -> FittedTable:
    """Counts per page; at a narrow terminal one record per page, so no page address is ever cut."""
    headers = ("page", "req", "exact", "canon", "fuzzy", "miss", "bg", "hit %")
    cells = [
        [
            name.split("://", 1)[-1],
            str(cov.requests),
            str(cov.exact),
            str(cov.canonical),
            str(cov.fuzzy),
            str(cov.miss + cov.live),
            str(cov.browser),
            f"{cov.matched_ratio:.1%}" if cov.requests else "—",
        ]
        for name, cov in rows
    ]
    return FittedTable(headers, cells, title, COVERAGE_LEGEND, left=1)


def _print_unmatched(coverage: Coverage, page: str | None = None) -> None:
    """Every counted miss and background request, each URL once with its count (they sum to the table's)."""
    where = f" on {page}" if page else ""
    for label, urls in (("miss", coverage.misses), ("browser", coverage.browser_requests)):
        for url, count in urls.items():
            times = f" x{count}" if count > 1 else ""
            console.print(f"  {label}{times}{where}: {url}", highlight=False, soft_wrap=True, markup=False)


def _print_entry(entry: ReplayLogEntry) -> None:
    source = f" [{entry.session}]" if entry.session else ""
    console.print(
        f"{entry.kind:<9} {entry.status} {entry.method} {entry.url}{source}",
        highlight=False,
        soft_wrap=True,
        markup=False,
    )


@contextmanager
def _stopped_by_sigterm() -> Iterator[threading.Event]:
    """An event SIGTERM sets while the block runs. It is set up before the server says it is ready,
    so a SIGTERM sent as soon as "press Ctrl-C" is read still ends the server with its coverage."""
    stop = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        yield stop
    finally:
        signal.signal(signal.SIGTERM, previous)


def _serve_until_stopped(server: ReplayService, stop: threading.Event, log: bool) -> None:
    """Wait for Ctrl-C or `stop`, printing each answered request as it comes when `log` is on."""
    shown = 0
    with suppress(KeyboardInterrupt):
        while not stop.wait(LOG_POLL_S):
            if log:
                entries = server.log
                for entry in entries[shown:]:
                    _print_entry(entry)
                shown = len(entries)
    if log:
        for entry in server.log[shown:]:
            _print_entry(entry)


@app.command("serve")
def serve(
    snapshot: Annotated[
        Path,
        typer.Argument(
            help="a .wacz snapshot, or a .warc/.warc.gz indexed on the fly", autocompletion=complete_snapshots
        ),
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
    log: Annotated[
        bool, typer.Option("--log", help="print one line per request: match kind, status, URL, session")
    ] = False,
) -> None:
    """Serve a snapshot until Ctrl-C or SIGTERM, then print its coverage."""
    if fallback not in ("none", "live"):
        raise SusbenchError(f"--fallback {fallback!r}: expected 'none' or 'live'")
    if mode not in MODES:
        raise SusbenchError(f"--mode {mode!r}: expected 'proxy' or 'direct'")
    if mode == "direct" and fallback != "none":
        raise SusbenchError("--fallback live needs --mode proxy: direct replay has no upstream at all")
    from susbench.core.hostmap import parse_host_map
    from susbench.replayer.direct import DirectReplayServer
    from susbench.replayer.proxy import ReplayServer

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
        flags = [*server.chromium_flags(), *QUIET_FLAGS]
        console.print(f"replaying [bold]{snapshot}[/] on [bold]{where}[/] (fallback: {fallback})")
        console.print("browse it with Chromium started with these flags (shell-quoted, then JSON):")
        console.print(shell_words(flags), soft_wrap=True, highlight=False, markup=False)
        console.print(json_words(flags), soft_wrap=True, highlight=False, markup=False)
        with _stopped_by_sigterm() as stop:
            console.print("press Ctrl-C to stop" + ("" if log else " (--log prints every request)"))
            _serve_until_stopped(server, stop, log)
        coverage = server.coverage()
    console.print(_coverage_table("replay coverage", [("all requests", coverage)]))
    _print_unmatched(coverage)


@app.command("check")
def check(
    snapshot: Annotated[
        Path, typer.Argument(help="a .wacz snapshot or a .warc/.warc.gz", autocompletion=complete_snapshots)
    ],
    as_json: JsonOption = False,
    timeout_s: Annotated[float, typer.Option("--timeout", help="seconds per page load")] = 30.0,
    mode: Annotated[str, typer.Option(help=MODE_HELP)] = "proxy",
) -> None:
    """Load every page of the snapshot in headless Chromium through the replayer; report coverage."""
    if mode not in MODES:
        raise SusbenchError(f"--mode {mode!r}: expected 'proxy' or 'direct'")
    from susbench.replayer.check import check_snapshot

    pages = check_snapshot(snapshot, timeout_s=timeout_s, mode=cast("Mode", mode), progress=progress_lines())
    if as_json:
        typer.echo(json.dumps([page.model_dump(mode="json") for page in pages], indent=2))
    else:
        console.print(
            _coverage_table(f"coverage of {snapshot}", [(page.url, page.coverage) for page in pages])
        )
        for page in pages:
            _print_unmatched(page.coverage, page.url)
            if page.error:
                console.print(
                    f"error on {page.url}: {page.error}", style="red", highlight=False, markup=False
                )
    if any(page.error for page in pages):
        raise typer.Exit(1)
