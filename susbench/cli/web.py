"""`susbench web`: serve the local web, or list its sites."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Protocol

import typer

from susbench.browser import Route, routed_profile
from susbench.cli.terminal import json_words, shell_words
from susbench.core.models import HostMap
from susbench.web.catalog import SITES
from susbench.web.edition import DEFAULT_DATE


class ServedRoute(Route, Protocol):
    """A server reached directly by host map: the local web, or an app's front."""

    @property
    def resolve(self) -> HostMap: ...

    @property
    def ca_cert_path(self) -> Path: ...


app = typer.Typer(help="The local web of synthetic consumer sites.", no_args_is_help=True)


@app.command()
def serve(
    port: int = typer.Option(8080, help="Loopback port serving HTTP and HTTPS."),
    host: str = typer.Option("127.0.0.1", help="Address to bind."),
    date: str = typer.Option(
        DEFAULT_DATE.isoformat(), help="Site date YYYY-MM-DD (drives prices, banners, drift)."
    ),
    seed: int = typer.Option(0, help="Seed for prices, ordering and the A/B variant."),
) -> None:
    """Serve every site until Ctrl-C, printing URLs, Chromium flags and the host map."""
    from susbench.web.server import LocalWeb  # the server (its TLS, its pages) is loaded to serve only

    with LocalWeb(port=port, date=date, seed=seed, host=host) as web:
        typer.echo(f"Local web on {web.loopback}:{web.port} (date {web.date}, seed {seed})")
        print_route(web, [(site.name, web.url(site.host)) for site in SITES])
        wait_for_interrupt()


def print_route(route: ServedRoute, sites: list[tuple[str, str]]) -> None:
    """Each site's URL, then the Chromium flags, the host map and the CA a recorder needs."""
    for name, url in sites:
        typer.echo(f"  {name:<18} {url}")
    flags = routed_profile(route).route_args()
    typer.echo("Chromium flags (shell-quoted, then JSON):")
    typer.echo(f"  {shell_words(flags)}")
    typer.echo(f"  {json_words(flags)}")
    typer.echo("Host map (--resolve):")
    typer.echo("  " + shell_words([word for rule in route.resolve.as_args() for word in ("--resolve", rule)]))
    typer.echo(f"CA certificate: {route.ca_cert_path}")


def wait_for_interrupt() -> None:
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        typer.echo("stopped")


@app.command()
def sites() -> None:
    """Print every site (host, name, category, start URL) as one JSON array."""
    rows = [{"host": s.host, "name": s.name, "category": s.category, "start_url": s.start_url} for s in SITES]
    typer.echo(json.dumps(rows, indent=2))
