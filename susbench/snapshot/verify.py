"""Full check of a snapshot: member hashes, our record scan, and warcio's digest check per record."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed

from susbench.errors import SnapshotError
from susbench.models import Frozen
from susbench.snapshot.reader import data_offset, load_json, verify_members
from susbench.snapshot.records import Damage, scan_warc
from susbench.snapshot.wacz import DATAPACKAGE

READ_CHUNK = 1 << 20


class VerifyReport(Frozen):
    """What `susbench snapshot verify` found; no `problems` means the snapshot is sound."""

    path: str
    members_checked: int
    records: int
    problems: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems


def _warcio_check(archive: zipfile.ZipFile, member: str) -> tuple[int, list[str]]:
    """warcio's `check`: read each record's raw stream so block and payload digests are verified."""
    problems: list[str] = []
    records = 0
    with archive.open(member) as stream:
        iterator = ArchiveIterator(stream, check_digests=True)
        try:
            for record in iterator:
                while record.raw_stream.read(READ_CHUNK):
                    pass
                records += 1
                if record.digest_checker.passed is False:
                    offset = iterator.get_record_offset()
                    problems.extend(f"{member}: offset {offset}: {p}" for p in record.digest_checker.problems)
        except (ArchiveLoadFailed, EOFError, OSError, ValueError, zipfile.BadZipFile) as exc:
            problems.append(f"{member}: record {records + 1} cannot be read: {str(exc).strip()}")
    return records, problems


def verify_snapshot(path: Path) -> VerifyReport:
    """Never raises for a damaged snapshot (only for one that is not a zip): it lists problems."""
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise SnapshotError(f"{path}: not a WACZ (zip) file: {exc}") from None
    problems: list[str] = []
    records = 0
    checked = 0
    with archive:
        try:
            checked = len(verify_members(archive, path, load_json(archive, path, DATAPACKAGE)))
        except SnapshotError as exc:
            problems.append(str(exc))
        fd = os.open(path, os.O_RDONLY)
        try:
            for info in archive.infolist():
                if not info.filename.startswith("archive/"):
                    continue
                count, found = _warcio_check(archive, info.filename)
                records += count
                problems.extend(found)
                start = data_offset(fd, info, path)
                for item in scan_warc(path, start, start + info.compress_size):
                    if isinstance(item, Damage):
                        problems.append(f"{info.filename}: offset {item.offset}: {item.reason}")
        finally:
            os.close(fd)
    return VerifyReport(path=str(path), members_checked=checked, records=records, problems=tuple(problems))
