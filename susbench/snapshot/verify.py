"""Full check of a snapshot: member hashes, digest and signature, our record scan, warcio's digests."""

from __future__ import annotations

import io
import os
import zipfile
from contextlib import redirect_stderr
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed
from warcio.statusandheaders import StatusAndHeadersParserException

from susbench.core.errors import SnapshotError
from susbench.core.models import Frozen
from susbench.snapshot.package import (
    DATAPACKAGE_DIGEST,
    ZIP_ERRORS,
    check_digest,
    load_digest,
    load_package,
    open_zip,
    verify_members,
)
from susbench.snapshot.reader import ARCHIVE_PREFIX, data_offset
from susbench.snapshot.records import Damage, scan_warc
from susbench.snapshot.signing import SignatureCheck, check_signature

READ_CHUNK = 1 << 20
WARCIO_ERRORS: tuple[type[BaseException], ...] = (
    *ZIP_ERRORS,
    ArchiveLoadFailed,
    StatusAndHeadersParserException,
    IndexError,
    KeyError,
    AttributeError,
    TypeError,
)
"""What warcio raises on damaged records besides its own error: it parses headers loosely, and some
damage reaches a missing header it then dereferences (AttributeError on None)."""


class VerifyReport(Frozen):
    """What `susbench snapshot verify` found; no `problems` means the snapshot is sound."""

    path: str
    members_checked: int
    records: int
    signature: SignatureCheck | None = None
    problems: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems


def _warcio_check(archive: zipfile.ZipFile, member: str) -> tuple[int, list[str]]:
    """warcio's `check`: read each record's raw stream so block and payload digests are verified.

    warcio writes what it cannot decompress or parse to stderr and reads on; those messages become
    problems of the record they came from, so the report, not a stray library line, says them."""
    problems: list[str] = []
    records = 0
    said = io.StringIO()
    try:
        with archive.open(member) as stream, redirect_stderr(said):
            iterator = ArchiveIterator(stream, check_digests=True)
            for record in iterator:
                while record.raw_stream.read(READ_CHUNK):
                    pass
                records += 1
                problems.extend(f"{member}: record {records}: {line}" for line in _said(said))
                if record.digest_checker.passed is False:
                    offset = iterator.get_record_offset()
                    problems.extend(f"{member}: offset {offset}: {p}" for p in record.digest_checker.problems)
    except WARCIO_ERRORS as exc:
        problems.append(f"{member}: record {records + 1} cannot be read: {str(exc).strip()[:200]}")
    problems.extend(f"{member}: after record {records}: {line}" for line in _said(said))
    return records, problems


def _said(stream: io.StringIO) -> list[str]:
    """The distinct lines written to `stream` so far, which it then forgets."""
    lines = list(dict.fromkeys(line.strip()[:200] for line in stream.getvalue().splitlines() if line.strip()))
    stream.seek(0)
    stream.truncate()
    return lines


def _package_problems(
    archive: zipfile.ZipFile, path: Path, trusted: Ed25519PublicKey | None
) -> tuple[int, SignatureCheck | None, list[str]]:
    """Members against datapackage.json, datapackage.json against its digest, the digest's signature."""
    try:
        checked = len(verify_members(archive, path, load_package(archive, path)))
        digest = load_digest(archive, path)
        check_digest(archive, path, digest)
    except SnapshotError as exc:
        return 0, None, [str(exc)]
    where = f"{path}: {DATAPACKAGE_DIGEST}"
    if digest is None:
        problems = [f"{where} is missing: the snapshot cannot be signed-checked"] if trusted else []
        return checked, None, problems
    if digest.signedData is None and trusted is None:
        return checked, None, []
    try:
        signature = check_signature(digest, where, trusted)
    except SnapshotError as exc:
        return checked, None, [str(exc)]
    return checked, signature, [signature.problem] if signature.problem else []


def verify_snapshot(path: Path, trusted: Ed25519PublicKey | None = None) -> VerifyReport:
    """Never raises for a damaged snapshot (only for one that is not a zip): it lists problems.

    With `trusted`, the snapshot must also carry a valid signature made by that key.
    """
    problems: list[str] = []
    records = 0
    with open_zip(path) as archive:
        checked, signature, found = _package_problems(archive, path, trusted)
        problems.extend(found)
        fd = os.open(path, os.O_RDONLY)
        try:
            for info in archive.infolist():
                if not info.filename.startswith(ARCHIVE_PREFIX) or info.is_dir():
                    continue
                count, found = _warcio_check(archive, info.filename)
                records += count
                problems.extend(found)
                try:
                    start = data_offset(fd, info, path)
                except SnapshotError as exc:
                    problems.append(str(exc))
                    continue
                for item in scan_warc(path, start, start + info.compress_size):
                    if isinstance(item, Damage):
                        problems.append(f"{info.filename}: offset {item.offset}: {item.reason}")
        finally:
            os.close(fd)
    return VerifyReport(
        path=str(path),
        members_checked=checked,
        records=records,
        signature=signature,
        problems=tuple(problems),
    )
