"""Content digests: of files (a model, a bundle's members, a snapshot), of folders (a built
extension, for a run's identity and a browser image's check, and artifacts shipped to other
machines) and of JSON values (a run's id, a stored outcome)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path


def file_sha256(path: Path) -> str:
    """sha256 hex of one file, read in chunks so a model file or an archive of gigabytes fits in memory."""
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def tree_sha256(folder: Path) -> str:
    """Digest of every file below `folder` (relative path and bytes)."""
    digest = hashlib.sha256()
    for path in sorted(item for item in folder.rglob("*") if item.is_file()):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def canonical_json(data: object) -> str:
    """Sorted keys, no whitespace: the same value always gives the same bytes."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
