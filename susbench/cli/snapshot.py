"""`susbench snapshot ...`: import, inspect, verify, sign and upgrade snapshots."""

from __future__ import annotations

from datetime import UTC, datetime
from itertools import groupby
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from susbench.core.errors import SnapshotError
from susbench.core.paths import complete_snapshots
from susbench.snapshot import Damage, Snapshot, generate_key, import_warc, sign_snapshot, verify_snapshot
from susbench.snapshot.saved import is_saved_html, pages_for
from susbench.snapshot.signing import load_public_key
from susbench.snapshot.wacz import upgrade_layout

snapshot_app = typer.Typer(no_args_is_help=True)
console = Console()

SnapshotArgument = Annotated[
    Path, typer.Argument(metavar="SNAPSHOT", help="a .wacz file", autocompletion=complete_snapshots)
]
FROZEN_CLOCK_NOTE = "pages replay at the recording time, not at the --date the local web served"
SESSION_LABEL = "browser session"  # heads the pages one recorded session visited, in `info`


@snapshot_app.command("import")
def import_command(
    out: Annotated[Path, typer.Option("--out", "-o", help="snapshot to write (.wacz)")],
    files: Annotated[
        list[Path] | None,
        typer.Argument(help="WARC, WARC.gz or WACZ files recorded by any tool; saved .html(.gz) pages"),
    ] = None,
    url_map: Annotated[
        Path | None,
        typer.Option(
            help="JSON/YAML: saved page file name -> original URL (or {url, captured_at}); "
            "without saved pages in FILES, every page it names"
        ),
    ] = None,
) -> None:
    """Turn standard WARCs, other tools' WACZs and saved HTML pages into a snapshot (records copied as
    they are; saved pages become records under their original URLs)."""
    given = files or []
    saved = pages_for([path for path in given if is_saved_html(path)], url_map)
    if not given and not saved:
        raise SnapshotError("snapshot import: no WARC, WACZ or saved page given; expected FILES or --url-map")
    skipped: list[Damage] = []
    warcs = [path for path in given if not is_saved_html(path)]
    path = import_warc(warcs, out, on_damage=skipped.append, saved=saved)
    for damage in skipped:
        console.print(f"[yellow]skipped damaged record:[/] {damage}", highlight=False)
    with Snapshot.open(path) as snapshot:
        console.print(f"wrote {path}: {len(snapshot)} responses, {len(snapshot.manifest.pages)} pages")


@snapshot_app.command("info")
def info_command(snapshot_path: SnapshotArgument) -> None:
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
        for session, visits in groupby(manifest.pages, key=lambda page: page.session):
            if session is not None:
                pages.add_row(Text(SESSION_LABEL, style="dim"), Text(session, style="bold"))
            for page in visits:
                captured = page.captured_at.astimezone(UTC).strftime("%H:%M:%S")
                pages.add_row(page.url.split("://", 1)[-1], page.title, captured, str(page.requests))
        console.print(pages)


@snapshot_app.command("verify")
def verify_command(
    snapshot_path: SnapshotArgument,
    pubkey: Annotated[
        Path | None, typer.Option("--pubkey", help="require a signature by this Ed25519 public key (PEM)")
    ] = None,
) -> None:
    """Check every member's hash, the datapackage digest and signature, and every WARC record."""
    trusted = load_public_key(pubkey) if pubkey is not None else None
    report = verify_snapshot(snapshot_path, trusted)
    for problem in report.problems:
        console.print(f"[red]FAIL[/] {problem}", highlight=False)
    if not report.ok:
        raise SnapshotError(f"{snapshot_path}: {len(report.problems)} problem(s) found")
    console.print(f"[green]OK[/] {snapshot_path}: {report.members_checked} members, {report.records} records")
    signature = report.signature
    if signature is not None:
        trust = "the key given" if trusted is not None else "not checked against a trusted key (see --pubkey)"
        console.print(f"[green]OK[/] signed ({signature.algorithm}) by {signature.signer}: {trust}")


@snapshot_app.command("keygen")
def keygen_command(
    out: Annotated[Path, typer.Option("--out", "-o", help="private key to write (PEM, mode 0600)")],
) -> None:
    """Make an Ed25519 key pair for signing snapshots: OUT (private) and OUT.pub (public)."""
    private_path, public_path = generate_key(out)
    console.print(f"wrote {private_path} (private, 0600) and {public_path} (public)")


@snapshot_app.command("sign")
def sign_command(
    snapshot_path: SnapshotArgument,
    key: Annotated[Path, typer.Option("--key", help="Ed25519 private key (PEM) from `snapshot keygen`")],
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="signed copy (default: sign in place)")
    ] = None,
) -> None:
    """Sign a snapshot: Ed25519 over its datapackage digest, in WACZ's `signedData` fields."""
    check = sign_snapshot(snapshot_path, key, out)
    console.print(f"signed {out or snapshot_path} with key {check.signer}")


@snapshot_app.command("upgrade")
def upgrade_command(
    snapshot_path: SnapshotArgument,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="upgraded copy (default: in place)")] = None,
) -> None:
    """Move an older snapshot's manifest into `susbench/` so Webrecorder's `wacz validate` accepts it."""
    path = upgrade_layout(snapshot_path, out or snapshot_path)
    console.print(f"wrote {path} (signature, if any, dropped: sign it again)")
