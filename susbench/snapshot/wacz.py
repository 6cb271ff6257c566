"""WACZ 1.1.1 packaging: every member ZIP_STORED so a reader can seek straight into the WARC."""

from __future__ import annotations

import hashlib
import json
import uuid
import zipfile
from collections.abc import Iterable
from datetime import UTC
from pathlib import Path

from susbench import __version__
from susbench.errors import SnapshotError
from susbench.models import SnapshotManifest
from susbench.snapshot.cdxj import IndexEntry, Indexer, write_cdxj
from susbench.snapshot.records import Damage, scan_warc

WACZ_VERSION = "1.1.1"
WARC_MEMBER = "archive/data.warc.gz"
INDEX_MEMBER = "indexes/index.cdx"
PAGES_MEMBER = "pages/pages.jsonl"
MANIFEST_MEMBER = "snapshot.json"
DATAPACKAGE = "datapackage.json"
DATAPACKAGE_DIGEST = "datapackage-digest.json"
PAGES_HEADER = {"format": "json-pages-1.0", "id": "pages", "title": "All Pages"}
COPY_CHUNK = 1 << 20


def index_warc(path: Path, filename: str | None = None) -> tuple[list[IndexEntry], list[Damage]]:
    """Index one WARC by scanning it once (offsets are those of the file as it is)."""
    indexer = Indexer()
    damaged: list[Damage] = []
    name = filename or path.name
    for item in scan_warc(path):
        if isinstance(item, Damage):
            damaged.append(item)
        else:
            indexer.add(item, name, item.offset, item.length)
    return indexer.entries(), damaged


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


def _store(archive: zipfile.ZipFile, name: str, source: Path | bytes) -> dict[str, object]:
    """Write one member (streamed if it is a file) and return its datapackage resource."""
    digest = hashlib.sha256()
    size = 0
    info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    with archive.open(info, "w", force_zip64=True) as target:
        if isinstance(source, bytes):
            target.write(source)
            digest.update(source)
            size = len(source)
        else:
            with open(source, "rb") as handle:
                while chunk := handle.read(COPY_CHUNK):
                    target.write(chunk)
                    digest.update(chunk)
                    size += len(chunk)
    return {"name": Path(name).name, "path": name, "hash": f"sha256:{digest.hexdigest()}", "bytes": size}


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
        _write_members(partial, warc, manifest, entries)
        partial.replace(out)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        where = f" ({exc.filename})" if exc.filename else ""
        raise SnapshotError(f"{out}: could not write the snapshot{where}: {exc.strerror or exc}") from None
    return out


def _write_members(
    partial: Path, warc: Path, manifest: SnapshotManifest, entries: Iterable[IndexEntry]
) -> None:
    resources = []
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
        resources.append(_store(archive, WARC_MEMBER, warc))
        resources.append(_store(archive, INDEX_MEMBER, write_cdxj(entries)))
        resources.append(_store(archive, PAGES_MEMBER, pages_jsonl(manifest)))
        resources.append(_store(archive, MANIFEST_MEMBER, manifest.model_dump_json(indent=2).encode()))
        first = manifest.pages[0] if manifest.pages else None
        package = {
            "profile": "data-package",
            "wacz_version": WACZ_VERSION,
            "title": manifest.id,
            "created": manifest.created_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "modified": manifest.created_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "software": f"susbench-replay {__version__}",
            "mainPageUrl": first.url if first else (manifest.targets[0] if manifest.targets else ""),
            "mainPageDate": first.captured_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if first else "",
            "resources": resources,
        }
        package_bytes = json.dumps(package, indent=2).encode("utf-8")
        _store(archive, DATAPACKAGE, package_bytes)
        digest = {"path": DATAPACKAGE, "hash": f"sha256:{hashlib.sha256(package_bytes).hexdigest()}"}
        _store(archive, DATAPACKAGE_DIGEST, json.dumps(digest, indent=2).encode("utf-8"))
