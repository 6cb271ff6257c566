"""Turn WARCs recorded by other tools into a snapshot, indexing them on the fly.

Records are copied byte for byte (only recompressed, one gzip member per record), so digests
and headers stay what the other tool wrote; damaged stretches are skipped and listed.
"""

from __future__ import annotations

import gzip
import tempfile
import warnings
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

from susbench.errors import SnapshotError
from susbench.models import PageCapture, SnapshotManifest
from susbench.snapshot.cdxj import IndexEntry, Indexer
from susbench.snapshot.records import Damage, scan_warc
from susbench.snapshot.wacz import WARC_MEMBER, write_wacz

HTML_MIMES = ("text/html", "application/xhtml+xml")


def _warn(damage: Damage) -> None:
    warnings.warn(f"skipped damaged record: {damage}", stacklevel=3)


def import_warc(
    paths: Iterable[Path | str],
    out: Path | str,
    snapshot_id: str | None = None,
    on_damage: Callable[[Damage], None] = _warn,
) -> Path:
    """Copy the records of `paths` into one WACZ at `out`; damaged records go to `on_damage`.

    Raises SnapshotError if an input is missing or holds no readable record at all.
    """
    out = Path(out)
    sources = [Path(path) for path in paths]
    if not sources:
        raise SnapshotError("snapshot import: no WARC files given")
    indexer = Indexer()
    damaged: list[Damage] = []
    dates: list[str] = []
    filename = Path(WARC_MEMBER).name
    with tempfile.TemporaryDirectory(prefix="susbench-import-") as tmp:
        warc = Path(tmp) / filename
        with open(warc, "wb") as target:
            for source in sources:
                if not source.is_file():
                    raise SnapshotError(f"{source}: no such WARC file")
                good = 0
                for item in scan_warc(source):
                    if isinstance(item, Damage):
                        damaged.append(item)
                        on_damage(item)
                        continue
                    good += 1
                    member = gzip.compress(item.raw, compresslevel=6, mtime=0)
                    offset = target.tell()
                    target.write(member)
                    indexer.add(item, filename, offset, len(member))
                    if item.type in ("response", "revisit") and item.header("WARC-Date"):
                        dates.append(item.header("WARC-Date") or "")
                if good == 0:
                    problem = f": {damaged[-1].reason}" if damaged else ""
                    raise SnapshotError(f"{source}: no readable WARC record{problem}")
        entries = indexer.entries()
        manifest = _manifest(out, snapshot_id, entries, dates, damaged, sources)
        return write_wacz(out, warc, manifest, entries)


def _parse_date(text: str) -> datetime:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return datetime.now(UTC)


def _manifest(
    out: Path,
    snapshot_id: str | None,
    entries: list[IndexEntry],
    dates: list[str],
    damaged: list[Damage],
    sources: list[Path],
) -> SnapshotManifest:
    """Pages are the HTML 200 GET responses; the clock seed is the earliest capture time."""
    ordered = sorted(entries, key=lambda entry: entry.seq)
    pages = []
    seen: set[str] = set()
    for entry in ordered:
        if (
            entry.method == "GET"
            and entry.status == 200
            and entry.mime in HTML_MIMES
            and entry.url not in seen
        ):
            seen.add(entry.url)
            stamp = datetime.strptime(entry.timestamp, "%Y%m%d%H%M%S").replace(tzinfo=UTC)
            pages.append(PageCapture(url=entry.url, captured_at=stamp, requests=0))
    start = min((_parse_date(text) for text in dates), default=datetime.now(UTC))
    hosts = sorted({urlsplit(entry.url).hostname or "" for entry in entries} - {""})
    return SnapshotManifest(
        id=snapshot_id or out.stem,
        created_at=start,
        targets=tuple(page.url for page in pages[:1]) or tuple(str(source) for source in sources),
        clock_seed_ms=int(start.timestamp() * 1000),
        pages=tuple(pages),
        hosts=tuple(hosts),
        source="imported",
        damaged=tuple(str(damage) for damage in damaged),
        tool_versions={"imported_from": ", ".join(source.name for source in sources)},
    )
