"""Open what a user hands the replayer: a WACZ snapshot, or a bare WARC indexed on the fly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from susbench.core.errors import SnapshotError

WARC_SUFFIXES = (".warc", ".warc.gz")


def is_warc(path: Path) -> bool:
    return path.name.lower().endswith(WARC_SUFFIXES)


def open_snapshot(path: Path, workdir: Path, damaged: list[Any] | None = None) -> Any:
    """A `susbench.snapshot.Snapshot`; a WARC is first imported into a WACZ under `workdir`.

    Damaged WARC records are skipped and appended to `damaged`, so the rest is still served.
    """
    found: list[Any] = [] if damaged is None else damaged
    from susbench.snapshot import Snapshot, import_warc

    if not path.exists():
        raise SnapshotError(f"{path}: no such file")
    if not path.is_file():
        raise SnapshotError(f"{path}: not a file")
    if is_warc(path):
        target = workdir / (path.name.split(".warc")[0] + ".wacz")
        return Snapshot.open(import_warc([path], target, on_damage=found.append))
    if path.suffix.lower() != ".wacz":
        raise SnapshotError(f"{path}: expected a .wacz snapshot or a .warc/.warc.gz file")
    return Snapshot.open(path)
