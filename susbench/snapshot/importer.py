"""Turn WARCs and WACZs made by other tools into a snapshot, indexing them on the fly.

Every record is copied byte for byte (only recompressed, one gzip member per record), so digests
and headers stay what the other tool wrote; damaged stretches are skipped and listed. A WACZ
(ArchiveWeb.page, Browsertrix, py-wacz...) is checked against its datapackage, then each WARC of its
`archive/` folder is read in place and its pages list is kept.
"""

from __future__ import annotations

import gzip
import shutil
import tempfile
import warnings
import zipfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

from susbench.core.errors import SnapshotError
from susbench.core.models import PageCapture, SnapshotManifest
from susbench.snapshot.cdxj import IndexEntry, Indexer, host_of
from susbench.snapshot.package import (
    ZIP_ERRORS,
    PageLine,
    check_digest,
    load_digest,
    load_package,
    load_pages,
    open_zip,
    parse_when,
    verify_members,
)
from susbench.snapshot.reader import ARCHIVE_PREFIX, capture_time
from susbench.snapshot.records import Damage, WarcRecord, scan_warc
from susbench.snapshot.saved import SavedPage, write_saved_warc
from susbench.snapshot.wacz import WARC_MEMBER, write_wacz

HTML_MIMES = ("text/html", "application/xhtml+xml")
WACZ_SUFFIX = ".wacz"


def _warn(damage: Damage) -> None:
    warnings.warn(f"skipped damaged record: {damage}", stacklevel=3)


class _Copier:
    """Appends records to the new WARC, indexes them, and remembers dates and damage."""

    def __init__(self, target: BinaryIO, on_damage: Callable[[Damage], None]) -> None:
        self.target = target
        self.on_damage = on_damage
        self.indexer = Indexer()
        self.damaged: list[Damage] = []
        self.dates: list[datetime] = []
        self.filename = Path(WARC_MEMBER).name

    def copy(self, label: str, items: Iterator[WarcRecord | Damage]) -> None:
        """Copy one WARC's records; a WARC without a single readable record is an error."""
        good = 0
        for item in items:
            if isinstance(item, Damage):
                damage = Damage(label, item.offset, item.reason)
                self.damaged.append(damage)
                self.on_damage(damage)
                continue
            good += 1
            member = gzip.compress(item.raw, compresslevel=6, mtime=0)
            offset = self.target.tell()
            self.target.write(member)
            self.indexer.add(item, self.filename, offset, len(member), source=label)
            when = parse_when(item.header("WARC-Date")) if item.type in ("response", "revisit") else None
            if when is not None:
                self.dates.append(when)
        if good == 0:
            problem = (
                f" (offset {self.damaged[-1].offset}: {self.damaged[-1].reason})" if self.damaged else ""
            )
            raise SnapshotError(
                f"{label}: no readable WARC record; expected WARC/1.0 or 1.1 records{problem}"
            )


def _copy_wacz(source: Path, copier: _Copier, workdir: Path) -> list[PageLine]:
    """Every WARC of a WACZ's `archive/` into `copier` (each copied out of the zip first); its pages."""
    with open_zip(source) as archive:
        package = load_package(archive, source)
        check_digest(archive, source, load_digest(archive, source))
        verify_members(archive, source, package)
        warcs = [
            info
            for info in sorted(archive.infolist(), key=lambda info: info.filename)
            if info.filename.startswith(ARCHIVE_PREFIX) and not info.is_dir()
        ]
        if not warcs:
            raise SnapshotError(f"{source}: no WARC in {ARCHIVE_PREFIX}: nothing to import")
        for info in warcs:
            label = f"{source}: {info.filename}"
            local = workdir / "member.warc"
            try:
                with archive.open(info) as stream, open(local, "wb") as handle:
                    shutil.copyfileobj(stream, handle)
            except ZIP_ERRORS as exc:
                raise SnapshotError(f"{label}: unreadable: {exc}") from None
            copier.copy(label, scan_warc(local))
        return load_pages(archive, source)


def import_warc(
    paths: Iterable[Path | str],
    out: Path | str,
    snapshot_id: str | None = None,
    on_damage: Callable[[Damage], None] = _warn,
    saved: Sequence[SavedPage] = (),
) -> Path:
    """Copy the records of `paths` (WARC, WARC.gz or WACZ) into one WACZ at `out`, after the
    `saved` pages (saved HTML as records under their original URLs, `susbench.snapshot.saved`).

    Damaged records go to `on_damage`. Raises SnapshotError if an input is missing, fails its
    datapackage hashes (a WACZ), or holds no readable record at all.
    """
    out = Path(out)
    sources = [Path(path) for path in paths]
    if not sources and not saved:
        raise SnapshotError("snapshot import: no WARC, WACZ or saved page given")
    pages: list[PageLine] = []
    with tempfile.TemporaryDirectory(prefix="susbench-import-") as tmp:
        warc = Path(tmp) / Path(WARC_MEMBER).name
        with open(warc, "wb") as target:
            copier = _Copier(target, on_damage)
            if saved:
                pages_warc = write_saved_warc(saved, Path(tmp) / "saved-pages.warc.gz")
                copier.copy(f"saved pages ({len(saved)})", scan_warc(pages_warc))
            for source in sources:
                if not source.is_file():
                    raise SnapshotError(f"{source}: no such WARC or WACZ file")
                if source.name.lower().endswith(WACZ_SUFFIX) or zipfile.is_zipfile(source):
                    pages.extend(_copy_wacz(source, copier, Path(tmp)))
                else:
                    copier.copy(str(source), scan_warc(source))
        entries = copier.indexer.entries()
        for damage in copier.indexer.damaged:
            copier.damaged.append(damage)
            on_damage(damage)
        names = [source.name for source in sources] + ([f"{len(saved)} saved pages"] if saved else [])
        manifest = _manifest(out, snapshot_id, entries, copier, pages, names)
        return write_wacz(out, warc, manifest, entries)


def _guessed_pages(entries: list[IndexEntry], start: datetime) -> list[PageCapture]:
    """Without a pages list, the pages are the HTML 200 GET responses, in capture order."""
    pages: list[PageCapture] = []
    seen: set[str] = set()
    for entry in sorted(entries, key=lambda item: item.seq):
        if (
            entry.method == "GET"
            and entry.status == 200
            and entry.mime in HTML_MIMES
            and entry.url not in seen
        ):
            seen.add(entry.url)
            when = capture_time(entry.timestamp) or start
            pages.append(PageCapture(url=entry.url, captured_at=when, requests=0))
    return pages


def _listed_pages(pages: list[PageLine], start: datetime) -> list[PageCapture]:
    """Each page once per session: the same URL visited in two task sessions stays two pages."""
    seen: set[tuple[str, str | None]] = set()
    captures: list[PageCapture] = []
    for page in pages:
        if (page.url, page.session) not in seen:
            seen.add((page.url, page.session))
            captures.append(page.capture(start))
    return captures


def _manifest(
    out: Path,
    snapshot_id: str | None,
    entries: list[IndexEntry],
    copier: _Copier,
    pages: list[PageLine],
    sources: list[str],
) -> SnapshotManifest:
    """The clock seed is the earliest capture time; pages come from the sources' lists when they have one."""
    start = min(copier.dates, default=None) or datetime.now(UTC)
    captures = _listed_pages(pages, start) if pages else _guessed_pages(entries, start)
    return SnapshotManifest(
        id=snapshot_id or out.stem,
        created_at=start,
        targets=tuple(page.url for page in captures[:1]) or tuple(sources),
        clock_seed_ms=int(start.timestamp() * 1000),
        pages=tuple(captures),
        hosts=tuple(sorted({host_of(entry.url) for entry in entries} - {""})),
        source="imported",
        damaged=tuple(str(damage) for damage in copier.damaged),
        tool_versions={"imported_from": ", ".join(sources)},
    )
