"""WACZ 1.1.1 packaging: every member ZIP_STORED so a reader can seek straight into the WARC.

Every member but the two datapackage files sits one folder deep, as Webrecorder's validator
(`wacz validate`) requires: our manifest is `susbench/snapshot.json` (older snapshots kept it at
the root as `snapshot.json`, which readers still accept).
"""

from __future__ import annotations

import hashlib
import json
import uuid
import zipfile
from collections.abc import Iterable, Mapping
from datetime import UTC
from pathlib import Path
from typing import IO

from susbench import __version__
from susbench.core.errors import SnapshotError
from susbench.core.models import SnapshotManifest
from susbench.snapshot.cdxj import IndexEntry, Indexer, load_json_object, write_cdxj
from susbench.snapshot.package import (
    DATAPACKAGE,
    DATAPACKAGE_DIGEST,
    PAGES_MEMBER,
    SignedData,
    load_package,
    open_zip,
    read_member,
    verify_members,
)
from susbench.snapshot.records import Damage, scan_warc

WACZ_VERSION = "1.1.1"
WARC_MEMBER = "archive/data.warc.gz"
INDEX_MEMBER = "indexes/index.cdx"
MANIFEST_MEMBER = "susbench/snapshot.json"
LEGACY_MANIFEST_MEMBER = "snapshot.json"
PAGES_HEADER = {"format": "json-pages-1.0", "id": "pages", "title": "All Pages"}
COPY_CHUNK = 1 << 20
ZIP_DATE = (2020, 1, 1, 0, 0, 0)

Source = Path | bytes | IO[bytes]


def index_warc(path: Path, filename: str | None = None) -> tuple[list[IndexEntry], list[Damage]]:
    """Index one WARC by scanning it once (offsets are those of the file as it is)."""
    indexer = Indexer()
    damaged: list[Damage] = []
    name = filename or path.name
    for item in scan_warc(path):
        if isinstance(item, Damage):
            damaged.append(item)
        else:
            indexer.add(item, name, item.offset, item.length, source=str(path))
    entries = indexer.entries()
    return entries, damaged + indexer.damaged


def pages_jsonl(manifest: SnapshotManifest) -> bytes:
    lines = [json.dumps(PAGES_HEADER)]
    for page in manifest.pages:
        stamp = page.captured_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        entry = {
            "id": uuid.uuid5(uuid.NAMESPACE_URL, page.url + stamp).hex,
            "url": page.url,
            "ts": stamp,
            "title": page.title,
        }
        if page.session is not None:
            entry["session"] = page.session
        lines.append(json.dumps(entry))
    return ("\n".join(lines) + "\n").encode("utf-8")


def manifest_json(manifest: SnapshotManifest) -> bytes:
    return manifest.model_dump_json(indent=2).encode()


def store(archive: zipfile.ZipFile, name: str, source: Source, size: int | None = None) -> dict[str, object]:
    """Write one member uncompressed (streamed unless it is bytes) and return its datapackage resource.

    The size is given to zipfile up front (`size` for a stream), so only a member over 4 GiB gets
    ZIP64 fields, in its local header and the central directory alike: ReplayWeb.page's zip reader
    (wabac.js) takes a member's data to start right after a local header without extra fields
    whenever the central directory entry has none.
    """
    digest = hashlib.sha256()
    info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
    info.compress_type = zipfile.ZIP_STORED
    if isinstance(source, bytes):
        info.file_size = len(source)
    elif isinstance(source, Path):
        info.file_size = source.stat().st_size
    elif size is not None:
        info.file_size = size
    else:
        raise ValueError(f"{name}: a stream needs its size")
    expected = info.file_size
    size = 0
    with archive.open(info, "w") as target:
        if isinstance(source, bytes):
            target.write(source)
            digest.update(source)
            size = len(source)
        else:
            handle = open(source, "rb") if isinstance(source, Path) else source  # noqa: SIM115 (closed below)
            try:
                while chunk := handle.read(COPY_CHUNK):
                    target.write(chunk)
                    digest.update(chunk)
                    size += len(chunk)
            finally:
                if isinstance(source, Path):
                    handle.close()
    if size != expected:
        raise SnapshotError(
            f"{name}: {size} bytes written, {expected} expected (the source changed while copied)"
        )
    return {"name": Path(name).name, "path": name, "hash": f"sha256:{digest.hexdigest()}", "bytes": size}


def package_json(manifest: SnapshotManifest, resources: list[dict[str, object]]) -> bytes:
    """datapackage.json: WACZ metadata from the manifest and the hash of every member."""
    stamp = manifest.created_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    first = manifest.pages[0] if manifest.pages else None
    package = {
        "profile": "data-package",
        "wacz_version": WACZ_VERSION,
        "title": manifest.id,
        "created": stamp,
        "modified": stamp,
        "software": f"susbench-replay {__version__}",
        "mainPageUrl": first.url if first else (manifest.targets[0] if manifest.targets else ""),
        "mainPageDate": first.captured_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if first else "",
        "resources": resources,
    }
    return json.dumps(package, indent=2).encode("utf-8")


def digest_json(package_bytes: bytes, signed: SignedData | None = None) -> bytes:
    """datapackage-digest.json: the sha256 of datapackage.json, with its `signedData` when signed."""
    document: dict[str, object] = {
        "path": DATAPACKAGE,
        "hash": f"sha256:{hashlib.sha256(package_bytes).hexdigest()}",
    }
    if signed is not None:
        document["signedData"] = signed.model_dump(exclude_none=True)
    return json.dumps(document, indent=2).encode("utf-8")


def write_wacz(
    out: Path, warc: Path, manifest: SnapshotManifest, entries: Iterable[IndexEntry] | None = None
) -> Path:
    """Package `warc` (per-record gzip) with its index, pages and manifest into `out`.

    Written to a temporary name and renamed, so a crash never leaves a half WACZ under `out`; a full
    disk removes the partial file and raises one `SnapshotError` naming `out`.
    """
    if entries is None:
        entries, _ = index_warc(warc, filename=Path(WARC_MEMBER).name)
    partial = out.with_name(out.name + ".partial")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
            resources = [
                store(archive, WARC_MEMBER, warc),
                store(archive, INDEX_MEMBER, write_cdxj(entries)),
                store(archive, PAGES_MEMBER, pages_jsonl(manifest)),
                store(archive, MANIFEST_MEMBER, manifest_json(manifest)),
            ]
            package_bytes = package_json(manifest, resources)
            store(archive, DATAPACKAGE, package_bytes)
            store(archive, DATAPACKAGE_DIGEST, digest_json(package_bytes))
        partial.replace(out)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        where = f" ({exc.filename})" if exc.filename else ""
        raise SnapshotError(f"{out}: could not write the snapshot{where}: {exc.strerror or exc}") from None
    return out


def replace_members(source: Path, out: Path, replacements: Mapping[str, bytes | None]) -> Path:
    """Copy `source` member by member into `out`, with `replacements` (None drops a member).

    Members keep their order and bytes; new names are appended. Written beside `out` and renamed,
    so `out` may be `source` itself.
    """
    partial = out.with_name(out.name + ".partial")
    with (
        zipfile.ZipFile(source) as old,
        zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as new,
    ):
        names = old.namelist()
        for name in names:
            if name in replacements:
                content = replacements[name]
                if content is not None:
                    store(new, name, content)
                continue
            with old.open(name) as handle:
                store(new, name, handle, old.getinfo(name).file_size)
        for name, content in replacements.items():
            if name not in names and content is not None:
                store(new, name, content)
    partial.replace(out)
    return out


def upgrade_layout(source: Path, out: Path) -> Path:
    """Move an older snapshot's root `snapshot.json` to `susbench/snapshot.json` (what `wacz validate` needs).

    The WARC, index and pages are copied as they are; datapackage.json lists the moved member and
    gets a new (unsigned) digest. Hashes are checked first, so a damaged snapshot is not rewritten.
    """
    with open_zip(source) as archive:
        names = archive.namelist()
        if LEGACY_MANIFEST_MEMBER not in names:
            raise SnapshotError(f"{source}: no root {LEGACY_MANIFEST_MEMBER}: already in the current layout")
        verify_members(archive, source, load_package(archive, source))
        manifest = read_member(archive, source, LEGACY_MANIFEST_MEMBER)
        document = load_json_object(read_member(archive, source, DATAPACKAGE), f"{source}: {DATAPACKAGE}")
    for resource in document["resources"]:
        if resource.get("path") == LEGACY_MANIFEST_MEMBER:
            resource["path"] = MANIFEST_MEMBER
    package_bytes = json.dumps(document, indent=2).encode("utf-8")
    replacements = {
        LEGACY_MANIFEST_MEMBER: None,
        DATAPACKAGE: package_bytes,
        DATAPACKAGE_DIGEST: digest_json(package_bytes),
        MANIFEST_MEMBER: manifest,
    }
    return replace_members(source, out, replacements)
