"""Commands of the recorder: `susbench record` and `susbench snapshot import|info|verify`."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from recorder.capture import load_target, record_plans
from susbench.completion_cli import complete_snapshots
from susbench.errors import SnapshotError
from susbench.hostmap import parse_host_map
from susbench.models import Viewport
from susbench.snapshot import Damage, Snapshot, import_warc, verify_snapshot

snapshot_app = typer.Typer(no_args_is_help=True)
FROZEN_CLOCK_NOTE = "pages replay at the recording time, not at the --date the local web served"
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


@snapshot_app.command("import")
def import_command(
    files: Annotated[list[Path], typer.Argument(help="WARC or WARC.gz files recorded by any tool")],
    out: Annotated[Path, typer.Option("--out", "-o", help="snapshot to write (.wacz)")],
) -> None:
    """Turn standard WARCs into a snapshot (records copied as they are, indexed on the fly)."""
    skipped: list[Damage] = []
    path = import_warc(files, out, on_damage=skipped.append)
    for damage in skipped:
        console.print(f"[yellow]skipped damaged record:[/] {damage}", highlight=False)
    with Snapshot.open(path) as snapshot:
        console.print(f"wrote {path}: {len(snapshot)} responses, {len(snapshot.manifest.pages)} pages")


@snapshot_app.command("info")
def info_command(
    snapshot_path: Annotated[Path, typer.Argument(metavar="SNAPSHOT", autocompletion=complete_snapshots)],
) -> None:
    """Manifest, pages and record counts of a snapshot."""
    with Snapshot.open(snapshot_path) as snapshot:
        manifest = snapshot.manifest
        entries = list(snapshot.entries())
        table = Table(title=f"{snapshot_path.name}", show_header=False, title_justify="left")
        table.add_column("field", no_wrap=True)
        table.add_column("value", overflow="fold")
        for key in ("id", "source", "created_at"):
            table.add_row(key, str(getattr(manifest, key)))
        frozen_at = datetime.fromtimestamp(manifest.clock_seed_ms / 1000, UTC).isoformat(timespec="seconds")
        table.add_row("frozen clock", f"{frozen_at} ({manifest.clock_seed_ms} ms): {FROZEN_CLOCK_NOTE}")
        for key in ("timezone", "locale", "user_agent", "browser_version"):
            table.add_row(key, str(getattr(manifest, key)))
        table.add_row("viewport", f"{manifest.viewport.width}x{manifest.viewport.height}")
        table.add_row("targets", "\n".join(manifest.targets))
        table.add_row("hosts", ", ".join(manifest.hosts))
        table.add_row("tools", ", ".join(f"{k} {v}" for k, v in manifest.tool_versions.items()))
        table.add_row("responses", str(sum(entry.record_type == "response" for entry in entries)))
        table.add_row("revisits", str(sum(entry.record_type == "revisit" for entry in entries)))
        table.add_row("non-GET", str(sum(entry.method != "GET" for entry in entries)))
        table.add_row("sha256", snapshot.sha256)
        if manifest.damaged:
            table.add_row("damaged", "\n".join(manifest.damaged))
        console.print(table)
        pages = Table(title=f"pages ({len(manifest.pages)})", title_justify="left")
        pages.add_column("url", overflow="fold", ratio=3)
        pages.add_column("title", overflow="fold", ratio=2)
        pages.add_column("captured UTC", no_wrap=True)
        pages.add_column("requests", justify="right", no_wrap=True)
        for page in manifest.pages:
            captured = page.captured_at.astimezone(UTC).strftime("%H:%M:%S")
            pages.add_row(page.url.split("://", 1)[-1], page.title, captured, str(page.requests))
        console.print(pages)


@snapshot_app.command("verify")
def verify_command(
    snapshot_path: Annotated[Path, typer.Argument(metavar="SNAPSHOT", autocompletion=complete_snapshots)],
) -> None:
    """Check every member's sha256 and every WARC record (framing and digests); non-zero on failure."""
    if not snapshot_path.is_file():
        raise SnapshotError(f"{snapshot_path}: no such snapshot file")
    report = verify_snapshot(snapshot_path)
    for problem in report.problems:
        console.print(f"[red]FAIL[/] {problem}", highlight=False)
    if not report.ok:
        raise SnapshotError(f"{snapshot_path}: {len(report.problems)} problem(s) found")
    console.print(f"[green]OK[/] {snapshot_path}: {report.members_checked} members, {report.records} records")
