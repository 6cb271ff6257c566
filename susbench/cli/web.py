"""`susbench web`: serve the local web, or list its sites."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime

import typer

from susbench.browser import routed_profile
from susbench.cli.terminal import json_words, shell_words
from susbench.web.catalog import SITES
from susbench.web.server import LocalWeb

app = typer.Typer(help="The local web of synthetic consumer sites.", no_args_is_help=True)


@app.command()
def serve(
    port: int = typer.Option(8080, help="Loopback port serving HTTP and HTTPS."),
    host: str = typer.Option("127.0.0.1", help="Address to bind."),
    date: str = typer.Option(
        None, help="Site date YYYY-MM-DD (drives prices, banners, drift); default today."
    ),
    seed: int = typer.Option(0, help="Seed for prices, ordering and the A/B variant."),
) -> None:
    """Serve every site until Ctrl-C, printing URLs, Chromium flags and the host map."""
    day = date or datetime.now(UTC).date().isoformat()
    with LocalWeb(port=port, date=day, seed=seed, host=host) as web:
        typer.echo(f"Local web on {web.loopback}:{web.port} (date {day}, seed {seed})")
        for site in SITES:
            typer.echo(f"  {site.name:<18} {web.url(site.host)}")
        flags = routed_profile(web).route_args()
        typer.echo("Chromium flags (shell-quoted, then JSON):")
        typer.echo(f"  {shell_words(flags)}")
        typer.echo(f"  {json_words(flags)}")
        typer.echo("Host map (--resolve):")
        typer.echo(
            "  " + shell_words([word for rule in web.resolve.as_args() for word in ("--resolve", rule)])
        )
        typer.echo(f"CA certificate: {web.ca_cert_path}")
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
