"""`susbench snapshot ...`: import, inspect, verify, sign and upgrade snapshots."""

from __future__ import annotations

from datetime import UTC, datetime
from itertools import groupby
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.text import Text

from susbench.core.errors import SnapshotError
from susbench.core.paths import complete_snapshots
from susbench.core.tables import FittedTable

# The archive code (warcio, cryptography) is imported by the commands that read or write one.
if TYPE_CHECKING:
    from susbench.snapshot import Damage, Snapshot

snapshot_app = typer.Typer(no_args_is_help=True)
console = Console()

SnapshotArgument = Annotated[
    Path, typer.Argument(metavar="SNAPSHOT", help="a .wacz file", autocompletion=complete_snapshots)
]
FROZEN_CLOCK_NOTE = "pages replay at the recording time, not at the --date the local web served"
SESSION_LABEL = "browser session"  # heads the pages one recorded session visited, in `info`
PAGE_HEADERS = ("url", "title", "captured UTC", "requests")


@snapshot_app.command("import")
def import_command(
    out: Annotated[Path, typer.Option("--out", "-o", help="snapshot to write (.wacz)")],
    files: Annotated[
        list[Path] | None,
        typer.Argument(help="WARC, WARC.gz, WACZ or HAR files recorded by any tool; saved .html(.gz) pages"),
    ] = None,
    url_map: Annotated[
        Path | None,
        typer.Option(
            help="JSON/YAML: saved page file name -> original URL (or {url, captured_at}); "
            "without saved pages in FILES, every page it names"
        ),
    ] = None,
) -> None:
    """Turn standard WARCs, other tools' WACZs and HARs, and saved HTML pages into a snapshot (records
    copied as they are; saved pages become records under their original URLs)."""
    from susbench.snapshot import Snapshot, import_warc
    from susbench.snapshot.saved import is_saved_html, pages_for

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
        counts = ", ".join(f"{count} {name}" for name, count in record_counts(snapshot).items())
        console.print(f"wrote {path}: {counts}, {len(snapshot.manifest.pages)} pages", soft_wrap=True)
        if not any(page.requests for page in snapshot.manifest.pages):
            console.print(
                "pages: taken from the archives (their pages lists, else every HTML page they answer), "
                "not from a recording's visits, so they can differ from the original's `snapshot info`",
                soft_wrap=True,
            )


def record_counts(snapshot: Snapshot) -> dict[str, int]:
    """The snapshot's records as `info` and `import` both count them: a revisit (an identical
    payload recorded again) is an answer too, but counted apart."""
    entries = list(snapshot.entries())
    return {
        "responses": sum(entry.record_type == "response" for entry in entries),
        "revisits": sum(entry.record_type == "revisit" for entry in entries),
        "non-GET": sum(entry.method != "GET" for entry in entries),
    }


def clock(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%H:%M:%S")


@snapshot_app.command("info")
def info_command(snapshot_path: SnapshotArgument) -> None:
    """Manifest, pages and record counts of a snapshot."""
    from susbench.snapshot import Snapshot

    with Snapshot.open(snapshot_path) as snapshot:
        manifest = snapshot.manifest
        fields: dict[str, str] = {key: str(getattr(manifest, key)) for key in ("id", "source", "created_at")}
        frozen_at = datetime.fromtimestamp(manifest.clock_seed_ms / 1000, UTC).isoformat(timespec="seconds")
        fields["frozen clock"] = f"{frozen_at} ({manifest.clock_seed_ms} ms): {FROZEN_CLOCK_NOTE}"
        for key in ("timezone", "locale", "user_agent", "browser_version"):
            fields[key] = str(getattr(manifest, key))
        fields["viewport"] = f"{manifest.viewport.width}x{manifest.viewport.height}"
        fields["targets"] = ", ".join(manifest.targets)
        fields["hosts"] = ", ".join(manifest.hosts)
        fields["tools"] = ", ".join(f"{k} {v}" for k, v in manifest.tool_versions.items())
        fields |= {name: str(count) for name, count in record_counts(snapshot).items()}
        fields["sha256"] = snapshot.sha256
        if manifest.damaged:
            fields["damaged"] = ", ".join(manifest.damaged)
        console.print(FittedTable(list(fields), [list(fields.values())], snapshot_path.name))
        console.print(Text(f"pages ({len(manifest.pages)})", style="italic"))
        for session, visits in groupby(manifest.pages, key=lambda page: page.session):
            rows = [
                [page.url.split("://", 1)[-1], page.title, clock(page.captured_at), str(page.requests)]
                for page in visits
            ]
            title = None if session is None else f"{SESSION_LABEL} {session}"
            console.print(FittedTable(PAGE_HEADERS, rows, title, left=3))


@snapshot_app.command("verify")
def verify_command(
    snapshot_path: SnapshotArgument,
    pubkey: Annotated[
        Path | None, typer.Option("--pubkey", help="require a signature by this Ed25519 public key (PEM)")
    ] = None,
) -> None:
    """Check every member's hash, the datapackage digest and signature, and every WARC record."""
    from susbench.snapshot import verify_snapshot
    from susbench.snapshot.signing import load_public_key

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
    from susbench.snapshot import generate_key

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
    from susbench.snapshot import sign_snapshot

    check = sign_snapshot(snapshot_path, key, out)
    console.print(f"signed {out or snapshot_path} with key {check.signer}")


@snapshot_app.command("upgrade")
def upgrade_command(
    snapshot_path: SnapshotArgument,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="upgraded copy (default: in place)")] = None,
) -> None:
    """Move an older snapshot's manifest into `susbench/` so Webrecorder's `wacz validate` accepts it."""
    from susbench.snapshot.wacz import upgrade_layout

    path = upgrade_layout(snapshot_path, out or snapshot_path)
    console.print(f"wrote {path} (signature, if any, dropped: sign it again)")
