"""The recorder's command: `susbench record` (snapshot commands live in `susbench.snapshot.cli`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from recorder.capture import load_target, record_plans
from susbench.hostmap import parse_host_map
from susbench.models import Viewport

console = Console()


def record(
    targets: Annotated[list[str], typer.Argument(help="URLs, capture plan YAML files or task YAML files")],
    out: Annotated[Path, typer.Option("--out", "-o", help="snapshot to write (.wacz)")],
    resolve: Annotated[
        list[str] | None, typer.Option("--resolve", help="HOST[:PORT]=IP:PORT, in the proxy")
    ] = None,
    upstream_ca: Annotated[
        Path | None, typer.Option("--upstream-ca", help="CA (PEM) upstream TLS must chain to")
    ] = None,
    headless: Annotated[bool, typer.Option("--headless/--headed")] = True,
    timezone: Annotated[str, typer.Option("--timezone")] = "America/New_York",
    locale: Annotated[str, typer.Option("--locale")] = "en-US",
    width: Annotated[int, typer.Option("--width")] = 1280,
    height: Annotated[int, typer.Option("--height")] = 800,
    keep_secrets: Annotated[
        bool,
        typer.Option("--keep-secrets", help="write cookies, credentials and token parameters unmasked"),
    ] = False,
) -> None:
    """Record targets through mitmproxy in Chromium into one WACZ snapshot.

    Cookie values, credentials and token query parameters (recorder/secrets.yaml) are masked in
    the snapshot unless --keep-secrets is given.
    """
    plans = [load_target(target) for target in targets]
    host_map = parse_host_map(resolve or [], "--resolve")
    if keep_secrets:
        console.print(
            f"[yellow]warning:[/] --keep-secrets: cookies, credentials and tokens go unmasked into {out}",
            highlight=False,
        )
    total = sum(len(plan.pages) for plan in plans)
    with Progress(
        TextColumn("[bold]recording"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=console,
    ) as bar:
        task = bar.add_task("", total=total)
        done = [0]

        def advance(url: str) -> None:
            bar.update(task, completed=done[0], description=url)
            done[0] += 1

        path = record_plans(
            plans,
            out,
            host_map=host_map,
            upstream_ca=upstream_ca,
            headless=headless,
            timezone=timezone,
            locale=locale,
            viewport=Viewport(width=width, height=height),
            targets=targets,
            progress=advance,
            keep_secrets=keep_secrets,
        )
        bar.update(task, completed=total, description="written")
    console.print(f"wrote {path}")
