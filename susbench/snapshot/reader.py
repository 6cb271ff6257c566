"""Open a WACZ snapshot: verify it, parse its index, and read single records by seeking.

The WARC is never read whole: the zip's members are stored uncompressed, so a record is one
`pread` of `length` bytes at the member's data offset plus the record's offset.
"""

from __future__ import annotations

import os
import struct
import threading
import warnings
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import Self

from pydantic import ValidationError

from susbench.core.digests import file_sha256
from susbench.core.errors import SnapshotError
from susbench.core.loading import describe_validation_error
from susbench.core.models import Frozen, SnapshotManifest
from susbench.snapshot.cdxj import IndexEntry, Indexer, host_of
from susbench.snapshot.indexes import read_indexes
from susbench.snapshot.limits import MAX_RECORD_BYTES, mib
from susbench.snapshot.package import (
    DATAPACKAGE,
    DataPackage,
    PageLine,
    check_digest,
    load_digest,
    load_package,
    load_pages,
    open_zip,
    parse_when,
    read_member,
    verify_members,
)
from susbench.snapshot.records import (
    Damage,
    RecordDamage,
    WarcRecord,
    dechunk,
    decoded_body,
    parse_http_request,
    parse_http_response,
    parse_record,
    scan_warc,
)
from susbench.snapshot.wacz import LEGACY_MANIFEST_MEMBER, MANIFEST_MEMBER

ARCHIVE_PREFIX = "archive/"
_LOCAL_HEADER = struct.Struct("<4sHHHHHIIIHH")
EPOCH = datetime.fromtimestamp(0, UTC)


class RecordedResponse(Frozen):
    """A recorded HTTP response as it went over the wire, minus Transfer-Encoding framing."""

    status: int
    reason: str = ""
    headers: tuple[tuple[str, str], ...]
    body: bytes
    http_version: str = "HTTP/1.1"
    record_type: str = "response"

    def header(self, name: str) -> str | None:
        wanted = name.lower()
        return next((value for key, value in self.headers if key.lower() == wanted), None)


class Snapshot:
    """A verified, indexed WACZ. Thread-safe for reads (`os.pread`, no shared file position)."""

    def __init__(
        self,
        path: Path,
        fd: int,
        members: dict[str, tuple[int, int]],
        entries: list[IndexEntry],
        manifest: SnapshotManifest,
    ) -> None:
        self.path = path
        self._fd = fd
        self._members = members
        self._entries = entries
        self.manifest = manifest
        self.damaged: list[Damage] = []
        self._lock = threading.Lock()
        self._originals: dict[str, IndexEntry] = {}
        for entry in sorted(entries, key=lambda item: item.seq):
            if entry.record_type == "response" and entry.digest:
                self._originals.setdefault(entry.digest, entry)

    @classmethod
    def open(cls, path: Path | str, verify: bool = True) -> Snapshot:
        """Open `path`; with `verify`, every member's hash is checked against datapackage.json.

        Reads ours and other tools' WACZ: CDXJ, CDX or ZipNum indexes, any number of WARCs in
        `archive/`. One without any index is indexed in memory (with a warning); one without our
        manifest gets a manifest derived from its datapackage, pages and index.
        """
        path = Path(path)
        with open_zip(path) as archive:
            if DATAPACKAGE not in archive.namelist():
                raise SnapshotError(f"{path}: {DATAPACKAGE} is missing: not a WACZ snapshot")
            package = load_package(archive, path)
            if verify:
                check_digest(archive, path, load_digest(archive, path))
                verify_members(archive, path, package)
            fd = os.open(path, os.O_RDONLY)
            try:
                members = {
                    info.filename: (data_offset(fd, info, path), info.file_size)
                    for info in archive.infolist()
                    if info.filename.startswith(ARCHIVE_PREFIX) and not info.is_dir()
                }
                damaged: list[Damage] = []
                entries = read_indexes(archive, path)
                if entries is None:
                    warnings.warn(f"{path}: no index in indexes/; indexing the WARCs in memory", stacklevel=2)
                    entries, damaged = _rebuild_index(path, members)
                manifest = load_manifest(archive, path) or foreign_manifest(
                    path, package, load_pages(archive, path), entries
                )
            except BaseException:
                os.close(fd)
                raise
        snapshot = cls(path, fd, members, entries, manifest)
        snapshot.damaged.extend(damaged)
        return snapshot

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def entries(self) -> Iterator[IndexEntry]:
        """Index entries in CDXJ order (SURT, timestamp, capture order)."""
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    @cached_property
    def sha256(self) -> str:
        """sha256 hex of the whole WACZ file (computed once, on first use)."""
        return file_sha256(self.path)

    def read_record(self, entry: IndexEntry) -> WarcRecord:
        """The WARC record behind `entry`; a damaged one raises SnapshotError naming file + offset."""
        return self._record_at(entry.filename, entry.offset, entry.length)

    def read_request(self, entry: IndexEntry) -> bytes | None:
        """The whole recorded request body of a non-GET `entry` (Transfer-Encoding undone).

        None when the index does not locate the request record (GETs, and snapshots indexed
        before `req_offset` existed), so callers fall back to `req_digest`.
        """
        if entry.req_offset is None or entry.req_length is None:
            return None
        record = self._record_at(entry.filename, entry.req_offset, entry.req_length)
        try:
            return decoded_body(parse_http_request(record.block))
        except ValueError as exc:
            where = f"{self.path}: {ARCHIVE_PREFIX}{entry.filename}: offset {entry.req_offset}"
            raise SnapshotError(f"{where}: {exc}") from None

    def _record_at(self, filename: str, offset: int, length: int) -> WarcRecord:
        member = f"{ARCHIVE_PREFIX}{filename}"
        where = f"{self.path}: {member}: offset {offset}"
        if member not in self._members:
            raise SnapshotError(f"{self.path}: {member} is not in the snapshot (index names it)")
        base, size = self._members[member]
        if offset + length > size:
            raise SnapshotError(
                f"{where}: the index says {length} bytes, past the end of the member ({size})"
            )
        if length > MAX_RECORD_BYTES:
            raise SnapshotError(f"{where}: record of {length} bytes is over the {mib(MAX_RECORD_BYTES)} cap")
        raw = os.pread(self._fd, length, base + offset)
        if len(raw) != length:
            raise SnapshotError(f"{where}: record truncated ({len(raw)} of {length} bytes)")
        try:
            return parse_record(raw, offset)
        except RecordDamage as damage:
            self._note(Damage(f"{self.path}: {member}", offset, damage.reason))
            raise SnapshotError(f"{where}: damaged record: {damage.reason}") from None

    def _message(self, entry: IndexEntry) -> _Message | None:
        """The HTTP response of a record; a `resource` record becomes a 200 with its Content-Type.

        None for a revisit that carries no HTTP headers of its own (its original provides them).
        """
        record = self.read_record(entry)
        if record.type == "resource":
            content_type = record.header("Content-Type") or "application/octet-stream"
            return _Message(("HTTP/1.1", "200", "OK"), [("Content-Type", content_type)], record.block)
        if record.type == "revisit" and not record.block.strip():
            return None
        try:
            message = parse_http_response(record.block)
        except ValueError as exc:
            where = f"{self.path}: {ARCHIVE_PREFIX}{entry.filename}: offset {entry.offset}"
            raise SnapshotError(f"{where}: {exc}") from None
        body = dechunk(message.body) if _is_chunked(message.headers) else message.body
        return _Message(message.start_line, message.headers, body)

    def read_response(self, entry: IndexEntry) -> RecordedResponse:
        """Status, headers and body of `entry`; a revisit takes its body from the original."""
        where = f"{self.path}: {ARCHIVE_PREFIX}{entry.filename}: offset {entry.offset}"
        message = self._message(entry)
        if entry.record_type == "revisit":
            original = self._originals.get(entry.digest)
            if original is None:
                raise SnapshotError(f"{where}: revisit of {entry.digest} has no original in the snapshot")
            source = self._message(original)
            if source is None:
                raise SnapshotError(f"{where}: the original of this revisit is itself a revisit")
            message = _Message(
                (message or source).start_line,
                (message.headers if message else None) or source.headers,
                source.body,
            )
        if message is None:
            raise SnapshotError(f"{where}: revisit record without HTTP headers is not indexed as a revisit")
        version, status, reason = message.start_line
        return RecordedResponse(
            status=int(status),
            reason=reason,
            headers=tuple((k, v) for k, v in message.headers if k.lower() != "transfer-encoding"),
            body=message.body,
            http_version=version,
            record_type=entry.record_type,
        )

    def _note(self, damage: Damage) -> None:
        with self._lock:
            if damage not in self.damaged:
                self.damaged.append(damage)


@dataclass(frozen=True)
class _Message:
    """A response as served: start line, headers (Transfer-Encoding still listed), de-chunked body."""

    start_line: tuple[str, str, str]
    headers: list[tuple[str, str]]
    body: bytes


def _is_chunked(headers: list[tuple[str, str]]) -> bool:
    return any(k.lower() == "transfer-encoding" and "chunked" in v.lower() for k, v in headers)


def data_offset(fd: int, info: zipfile.ZipInfo, path: Path) -> int:
    """Where a stored member's bytes start in the zip file (after its local header)."""
    try:
        header = os.pread(fd, _LOCAL_HEADER.size, info.header_offset)
    except (OSError, OverflowError):
        header = b""
    if len(header) != _LOCAL_HEADER.size or header[:4] != b"PK\x03\x04":
        raise SnapshotError(f"{path}: member {info.filename}: bad local zip header")
    fields = _LOCAL_HEADER.unpack(header)
    if info.compress_type != zipfile.ZIP_STORED:
        raise SnapshotError(
            f"{path}: member {info.filename} is compressed in the zip; WACZ needs it stored "
            "(`susbench snapshot import` converts such a file)"
        )
    return info.header_offset + _LOCAL_HEADER.size + fields[9] + fields[10]


def load_manifest(archive: zipfile.ZipFile, path: Path) -> SnapshotManifest | None:
    """Our manifest (`susbench/snapshot.json`, or `snapshot.json` in older snapshots), if present."""
    names = set(archive.namelist())
    for member in (MANIFEST_MEMBER, LEGACY_MANIFEST_MEMBER):
        if member in names:
            try:
                return SnapshotManifest.model_validate_json(read_member(archive, path, member))
            except ValidationError as exc:
                raise SnapshotError(describe_validation_error(f"{path}: {member}", exc)) from None
    return None


def capture_time(timestamp: str) -> datetime | None:
    """A CDX timestamp as a time; None for digits that are no date (month 00, ...)."""
    try:
        return datetime.strptime(timestamp[:14], "%Y%m%d%H%M%S").replace(tzinfo=UTC)
    except ValueError:
        return None


def foreign_manifest(
    path: Path, package: DataPackage, pages: list[PageLine], entries: list[IndexEntry]
) -> SnapshotManifest:
    """A manifest for another tool's WACZ: clock from its earliest capture, pages from pages.jsonl."""
    times = [when for entry in entries if (when := capture_time(entry.timestamp)) is not None]
    start = min(times, default=None) or parse_when(package.created) or EPOCH
    captures = tuple(page.capture(start) for page in pages)
    targets = tuple(page.url for page in captures[:1]) or tuple(filter(None, [package.mainPageUrl]))
    return SnapshotManifest(
        id=path.stem,
        created_at=start,
        targets=targets,
        clock_seed_ms=int(start.timestamp() * 1000),
        pages=captures,
        hosts=tuple(sorted({host_of(entry.url) for entry in entries} - {""})),
        source="imported",
        tool_versions={"software": package.software} if package.software else {},
    )


def _rebuild_index(path: Path, members: dict[str, tuple[int, int]]) -> tuple[list[IndexEntry], list[Damage]]:
    """Index every WARC member in place (they are stored, so they are scanned inside the zip)."""
    indexer = Indexer()
    damaged: list[Damage] = []
    for member in sorted(members):
        start, size = members[member]
        filename = member.removeprefix(ARCHIVE_PREFIX)
        for item in scan_warc(path, start, start + size):
            if isinstance(item, Damage):
                damaged.append(Damage(f"{path}: {member}", item.offset, item.reason))
            else:
                indexer.add(item, filename, item.offset, item.length, source=f"{path}: {member}")
    entries = indexer.entries()
    return entries, damaged + indexer.damaged
