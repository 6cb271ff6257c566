"""Open a WACZ snapshot: verify it, parse its index, and read single records by seeking.

The WARC is never read whole: the zip's members are stored uncompressed, so a record is one
`pread` of `length` bytes at the member's data offset plus the record's offset.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import tempfile
import threading
import warnings
import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import Self

from pydantic import ValidationError

from susbench.errors import SnapshotError
from susbench.models import Frozen, SnapshotManifest
from susbench.snapshot.cdxj import IndexEntry, parse_cdxj
from susbench.snapshot.records import (
    Damage,
    RecordDamage,
    WarcRecord,
    dechunk,
    decoded_body,
    parse_http_request,
    parse_http_response,
    parse_record,
)
from susbench.snapshot.wacz import DATAPACKAGE, INDEX_MEMBER, MANIFEST_MEMBER, index_warc

HASH_CHUNK = 1 << 20
_LOCAL_HEADER = struct.Struct("<4sHHHHHIIIHH")


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


def _sha256_stream(handle: zipfile.ZipExtFile) -> tuple[str, int]:
    digest = hashlib.sha256()
    size = 0
    while chunk := handle.read(HASH_CHUNK):
        digest.update(chunk)
        size += len(chunk)
    return digest.hexdigest(), size


class Snapshot:
    """A verified, indexed WACZ. Thread-safe for reads (`os.pread`, no shared file position)."""

    def __init__(
        self,
        path: Path,
        fd: int,
        members: dict[str, int],
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
        """Open `path`; with `verify`, every member's sha256 is checked against datapackage.json.

        A WACZ without `indexes/index.cdx` is indexed in memory (with a warning) rather than
        refused, so WACZ files from tools that write only other index formats still open.
        """
        path = Path(path)
        if not path.is_file():
            raise SnapshotError(f"{path}: no such snapshot file")
        try:
            archive = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError) as exc:
            raise SnapshotError(f"{path}: not a WACZ (zip) file: {exc}") from None
        with archive:
            names = set(archive.namelist())
            if DATAPACKAGE not in names:
                raise SnapshotError(f"{path}: {DATAPACKAGE} is missing: not a WACZ snapshot")
            package = load_json(archive, path, DATAPACKAGE)
            if verify:
                verify_members(archive, path, package)
            fd = os.open(path, os.O_RDONLY)
            members = {info.filename: data_offset(fd, info, path) for info in archive.infolist()}
            manifest = _manifest(archive, path, names)
            if INDEX_MEMBER in names:
                entries = parse_cdxj(archive.read(INDEX_MEMBER).decode("utf-8"), f"{path}: {INDEX_MEMBER}")
                damaged: list[Damage] = []
            else:
                warnings.warn(
                    f"{path}: {INDEX_MEMBER} is missing; indexing the WARCs in memory", stacklevel=2
                )
                entries, damaged = _rebuild_index(archive, path)
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
        digest = hashlib.sha256()
        with open(self.path, "rb") as handle:
            while chunk := handle.read(HASH_CHUNK):
                digest.update(chunk)
        return digest.hexdigest()

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
            where = f"{self.path}: archive/{entry.filename}: offset {entry.req_offset}"
            raise SnapshotError(f"{where}: {exc}") from None

    def _record_at(self, filename: str, offset: int, length: int) -> WarcRecord:
        member = f"archive/{filename}"
        base = self._members.get(member)
        where = f"{self.path}: {member}: offset {offset}"
        if base is None:
            raise SnapshotError(f"{self.path}: {member} is not in the snapshot (index names it)")
        raw = os.pread(self._fd, length, base + offset)
        if len(raw) != length:
            raise SnapshotError(f"{where}: record truncated ({len(raw)} of {length} bytes)")
        try:
            return parse_record(raw, offset)
        except RecordDamage as damage:
            self._note(Damage(f"{self.path}: {member}", offset, damage.reason))
            raise SnapshotError(f"{where}: damaged record: {damage.reason}") from None

    def read_response(self, entry: IndexEntry) -> RecordedResponse:
        """Status, headers and body of `entry`; a revisit takes its body from the original."""
        record = self.read_record(entry)
        where = f"{self.path}: archive/{entry.filename}: offset {entry.offset}"
        try:
            message = parse_http_response(record.block)
        except ValueError as exc:
            raise SnapshotError(f"{where}: {exc}") from None
        body = message.body
        headers = message.headers
        if entry.record_type == "revisit":
            original = self._originals.get(entry.digest)
            if original is None:
                raise SnapshotError(f"{where}: revisit of {entry.digest} has no original in the snapshot")
            source = parse_http_response(self.read_record(original).block)
            body = source.body
            if not headers:
                headers = source.headers
            if _is_chunked(source.headers):
                body = dechunk(body)
        elif _is_chunked(headers):
            body = dechunk(body)
        kept = tuple((k, v) for k, v in headers if k.lower() != "transfer-encoding")
        version, status, reason = message.start_line
        return RecordedResponse(
            status=int(status),
            reason=reason,
            headers=kept,
            body=body,
            http_version=version,
            record_type=entry.record_type,
        )

    def _note(self, damage: Damage) -> None:
        with self._lock:
            if damage not in self.damaged:
                self.damaged.append(damage)


def _is_chunked(headers: list[tuple[str, str]]) -> bool:
    return any(k.lower() == "transfer-encoding" and "chunked" in v.lower() for k, v in headers)


def load_json(archive: zipfile.ZipFile, path: Path, member: str) -> dict[str, object]:
    try:
        data = json.loads(archive.read(member))
    except (ValueError, zipfile.BadZipFile, OSError) as exc:
        raise SnapshotError(f"{path}: {member}: unreadable: {exc}") from None
    if not isinstance(data, dict):
        raise SnapshotError(f"{path}: {member}: expected a JSON object")
    return data


def verify_members(archive: zipfile.ZipFile, path: Path, package: dict[str, object]) -> list[str]:
    """Check sha256 and size of every datapackage resource; raise naming the first bad member."""
    resources = package.get("resources")
    if not isinstance(resources, list):
        raise SnapshotError(f"{path}: {DATAPACKAGE}: no 'resources' list")
    checked = []
    for resource in resources:
        member = str(resource.get("path", ""))
        expected = str(resource.get("hash", "")).removeprefix("sha256:")
        try:
            with archive.open(member) as handle:
                actual, size = _sha256_stream(handle)
        except KeyError:
            raise SnapshotError(f"{path}: member {member} listed in {DATAPACKAGE} is missing") from None
        except (zipfile.BadZipFile, OSError) as exc:
            raise SnapshotError(f"{path}: member {member}: corrupted (zip CRC check failed: {exc})") from None
        if actual != expected:
            raise SnapshotError(
                f"{path}: member {member}: sha256 mismatch (datapackage says {expected[:16]}..., "
                f"file has {actual[:16]}...)"
            )
        if "bytes" in resource and int(resource["bytes"]) != size:
            raise SnapshotError(
                f"{path}: member {member}: size {size} != {resource['bytes']} in {DATAPACKAGE}"
            )
        checked.append(member)
    return checked


def data_offset(fd: int, info: zipfile.ZipInfo, path: Path) -> int:
    header = os.pread(fd, _LOCAL_HEADER.size, info.header_offset)
    if len(header) != _LOCAL_HEADER.size or header[:4] != b"PK\x03\x04":
        raise SnapshotError(f"{path}: member {info.filename}: bad local zip header")
    fields = _LOCAL_HEADER.unpack(header)
    if info.compress_type != zipfile.ZIP_STORED and info.filename.startswith("archive/"):
        raise SnapshotError(f"{path}: member {info.filename} is compressed in the zip; WACZ needs it stored")
    return info.header_offset + _LOCAL_HEADER.size + fields[9] + fields[10]


def _manifest(archive: zipfile.ZipFile, path: Path, names: set[str]) -> SnapshotManifest:
    """Our `snapshot.json`, or a minimal manifest derived from datapackage/pages for foreign WACZ."""
    if MANIFEST_MEMBER in names:
        try:
            return SnapshotManifest.model_validate_json(archive.read(MANIFEST_MEMBER))
        except ValidationError as exc:
            raise SnapshotError(
                f"{path}: {MANIFEST_MEMBER}: invalid manifest: {exc.errors()[0]['msg']}"
            ) from None
    package = load_json(archive, path, DATAPACKAGE)
    created = datetime.now(UTC)
    return SnapshotManifest(
        id=path.stem,
        created_at=created,
        targets=(str(package.get("mainPageUrl", "")),),
        clock_seed_ms=int(created.timestamp() * 1000),
        source="imported",
    )


def _rebuild_index(archive: zipfile.ZipFile, path: Path) -> tuple[list[IndexEntry], list[Damage]]:
    indexer_entries: list[IndexEntry] = []
    damaged: list[Damage] = []
    for name in sorted(n for n in archive.namelist() if n.startswith("archive/")):
        with tempfile.TemporaryDirectory(prefix="susbench-index-") as tmp:
            local = Path(archive.extract(name, tmp))
            entries, problems = index_warc(local, filename=Path(name).name)
        indexer_entries.extend(entries)
        damaged.extend(Damage(f"{path}: {name}", d.offset, d.reason) for d in problems)
    return indexer_entries, damaged
