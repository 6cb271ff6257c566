"""Content digests of folders: a built extension (a run's identity, a browser image's check) and
artifacts shipped to other machines."""

from __future__ import annotations

import hashlib
from pathlib import Path


def tree_sha256(folder: Path) -> str:
    """Digest of every file below `folder` (relative path and bytes)."""
    digest = hashlib.sha256()
    for path in sorted(item for item in folder.rglob("*") if item.is_file()):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()
