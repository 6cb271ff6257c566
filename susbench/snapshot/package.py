"""The WACZ package around the WARCs: zip members, `datapackage.json`, its digest, and page lists.

Written to read what Webrecorder's tools write too (py-wacz, Browsertrix, ArchiveWeb.page): their
JSON carries keys of their own, so these models ignore unknown keys instead of refusing them, and
every problem becomes one SnapshotError naming the file, the member and the field.
"""

from __future__ import annotations

import hashlib
import struct
import zipfile
import zlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from susbench.core.errors import SnapshotError
from susbench.core.loading import describe_validation_error
from susbench.core.models import PageCapture
from susbench.snapshot.cdxj import load_json_object
from susbench.snapshot.limits import MAX_METADATA_BYTES, MAX_NAME_CHARS, mib, shown

DATAPACKAGE = "datapackage.json"
DATAPACKAGE_DIGEST = "datapackage-digest.json"
PACKAGE_FILES = (DATAPACKAGE, DATAPACKAGE_DIGEST)
PAGES_MEMBER = "pages/pages.jsonl"
EXTRA_PAGES_MEMBER = "pages/extraPages.jsonl"
HASH_ALGORITHMS = ("sha256", "sha384", "sha512", "sha1", "md5")
HASH_CHUNK = 1 << 20

ZIP_ERRORS: tuple[type[BaseException], ...] = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    zlib.error,
    struct.error,
    EOFError,
    OSError,
    NotImplementedError,
    RuntimeError,
    ValueError,
    OverflowError,
)
"""What zipfile raises on a damaged archive: bad structures, bad CRC, unknown compression, encryption."""

ModelT = TypeVar("ModelT", bound=BaseModel)


class Tolerant(BaseModel):
    """Frozen like every model, but keys added by other tools are ignored rather than refused."""

    model_config = ConfigDict(extra="ignore", frozen=True)


class ResourceStats(Tolerant):
    """WACZ 1.0.0 put the hash under `stats`."""

    hash: str
    bytes: int | None = Field(default=None, ge=0)


class PackageResource(Tolerant):
    path: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    hash: str | None = None
    bytes: int | None = Field(default=None, ge=0)
    stats: ResourceStats | None = None
    hashing: str | None = None

    def expected(self) -> tuple[str, str]:
        """(algorithm, hex digest) from `sha256:<hex>` (WACZ 1.1) or `stats.hash` + `hashing` (1.0)."""
        if self.hash is not None:
            algorithm, _, value = self.hash.partition(":")
            if not value:
                algorithm, value = "sha256", self.hash
        elif self.stats is not None:
            algorithm, value = (self.hashing or "sha256"), self.stats.hash
        else:
            raise ValueError("no 'hash'")
        algorithm = algorithm.lower().replace("-", "")
        if algorithm not in HASH_ALGORITHMS:
            raise ValueError(
                f"hash algorithm {shown(algorithm)}: expected one of {', '.join(HASH_ALGORITHMS)}"
            )
        return algorithm, value.lower()

    @property
    def size(self) -> int | None:
        return self.bytes if self.bytes is not None else self.stats.bytes if self.stats else None


class DataPackage(Tolerant):
    """`datapackage.json`: the Frictionless package listing every member with its hash."""

    resources: tuple[PackageResource, ...]
    profile: str | None = None
    wacz_version: str | None = None
    title: str | None = None
    created: str | None = None
    software: str | None = None
    mainPageUrl: str | None = None


class SignedData(Tolerant):
    """WACZ signing's `signedData`: a signature over `hash` (anonymous key, or a domain certificate)."""

    hash: str
    signature: str
    publicKey: str | None = None
    domain: str | None = None
    domainCert: str | None = None
    created: str | None = None
    software: str | None = None


class PackageDigest(Tolerant):
    """`datapackage-digest.json`: the hash of datapackage.json, optionally signed."""

    path: str
    hash: str
    signedData: SignedData | None = None


class PageLine(Tolerant):
    """One line of `pages/pages.jsonl` (extra keys such as `text`, `size`, `favIconUrl` ignored)."""

    url: str = Field(min_length=1)
    ts: str | None = None
    title: str | None = None
    session: str | None = Field(default=None, min_length=1, max_length=MAX_NAME_CHARS)

    def capture(self, start: datetime) -> PageCapture:
        """The page as a manifest lists it; `start` stands in for a missing or unreadable `ts`."""
        return PageCapture(
            url=self.url,
            title=self.title or "",
            captured_at=parse_when(self.ts) or start,
            session=self.session,
        )


def open_zip(path: Path) -> zipfile.ZipFile:
    if not path.is_file():
        raise SnapshotError(f"{path}: no such snapshot file")
    try:
        archive = zipfile.ZipFile(path)
    except ZIP_ERRORS as exc:
        raise SnapshotError(f"{path}: not a WACZ (zip) file: {exc}") from None
    for name in archive.namelist():
        if len(name) > MAX_NAME_CHARS:
            archive.close()
            raise SnapshotError(
                f"{path}: a member name of {len(name)} characters (expected at most {MAX_NAME_CHARS})"
            )
    return archive


def read_member(archive: zipfile.ZipFile, path: Path, member: str, cap: int = MAX_METADATA_BYTES) -> bytes:
    """One member's bytes, refusing one that says (or turns out) to be larger than `cap`."""
    try:
        info = archive.getinfo(member)
        if info.file_size > cap:
            raise SnapshotError(f"{path}: {member}: {info.file_size} bytes is over the {mib(cap)} cap")
        with archive.open(info) as handle:
            data = handle.read(cap + 1)
    except KeyError:
        raise SnapshotError(f"{path}: {member} is missing") from None
    except ZIP_ERRORS as exc:
        raise SnapshotError(f"{path}: member {member}: unreadable: {exc}") from None
    if len(data) > cap:
        raise SnapshotError(f"{path}: {member}: over the {mib(cap)} cap")
    return data


def validated(model: type[ModelT], data: Any, where: str) -> ModelT:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise SnapshotError(describe_validation_error(where, exc)) from None


def load_package(archive: zipfile.ZipFile, path: Path) -> DataPackage:
    where = f"{path}: {DATAPACKAGE}"
    return validated(DataPackage, load_json_object(read_member(archive, path, DATAPACKAGE), where), where)


def load_digest(archive: zipfile.ZipFile, path: Path) -> PackageDigest | None:
    if DATAPACKAGE_DIGEST not in archive.namelist():
        return None
    where = f"{path}: {DATAPACKAGE_DIGEST}"
    raw = read_member(archive, path, DATAPACKAGE_DIGEST)
    return validated(PackageDigest, load_json_object(raw, where), where)


def hash_member(archive: zipfile.ZipFile, path: Path, member: str, algorithm: str) -> tuple[str, int]:
    """(hex digest, size) of a member, streamed; damaged zip data is a SnapshotError naming it."""
    digest = hashlib.new(algorithm)
    size = 0
    try:
        with archive.open(member) as handle:
            while chunk := handle.read(HASH_CHUNK):
                digest.update(chunk)
                size += len(chunk)
    except KeyError:
        raise SnapshotError(f"{path}: member {member} listed in {DATAPACKAGE} is missing") from None
    except ZIP_ERRORS as exc:
        raise SnapshotError(f"{path}: member {member}: corrupted (zip check failed: {exc})") from None
    return digest.hexdigest(), size


def verify_members(archive: zipfile.ZipFile, path: Path, package: DataPackage) -> list[str]:
    """Hash and size of every listed member; no member may be unlisted. Raises naming the first bad one."""
    expectations = []
    for number, resource in enumerate(package.resources):
        try:
            expectations.append((resource, *resource.expected()))
        except ValueError as exc:
            raise SnapshotError(f"{path}: {DATAPACKAGE}: field 'resources.{number}': {exc}") from None
    listed = {resource.path for resource in package.resources}
    for name in archive.namelist():
        if name not in listed and name not in PACKAGE_FILES and not name.endswith("/"):
            raise SnapshotError(f"{path}: member {name} is not listed in {DATAPACKAGE}")
    for resource, algorithm, expected in expectations:
        actual, size = hash_member(archive, path, resource.path, algorithm)
        if actual != expected:
            raise SnapshotError(
                f"{path}: member {resource.path}: {algorithm} mismatch (datapackage says {expected[:16]}..., "
                f"file has {actual[:16]}...)"
            )
        if resource.size is not None and resource.size != size:
            raise SnapshotError(
                f"{path}: member {resource.path}: size {size} != {resource.size} in {DATAPACKAGE}"
            )
    return sorted(listed)


def check_digest(archive: zipfile.ZipFile, path: Path, digest: PackageDigest | None) -> None:
    """datapackage-digest.json must hash datapackage.json as it is (the root of every member hash)."""
    if digest is None:
        return
    where = f"{path}: {DATAPACKAGE_DIGEST}"
    if digest.path != DATAPACKAGE:
        raise SnapshotError(f"{where}: field 'path': expected {DATAPACKAGE!r}, got {shown(digest.path)}")
    algorithm, _, expected = digest.hash.partition(":")
    if algorithm not in HASH_ALGORITHMS or not expected:
        raise SnapshotError(f"{where}: field 'hash': expected '<algorithm>:<hex>', got {digest.hash[:40]!r}")
    actual, _ = hash_member(archive, path, DATAPACKAGE, algorithm)
    if actual != expected.lower():
        raise SnapshotError(f"{path}: member {DATAPACKAGE}: does not match the hash in {DATAPACKAGE_DIGEST}")


def load_pages(archive: zipfile.ZipFile, path: Path) -> list[PageLine]:
    """Pages of pages.jsonl and extraPages.jsonl (header lines skipped); [] when there are none."""
    pages: list[PageLine] = []
    for member in (PAGES_MEMBER, EXTRA_PAGES_MEMBER):
        if member not in archive.namelist():
            continue
        for number, line in enumerate(read_member(archive, path, member).splitlines(), start=1):
            if not line.strip():
                continue
            where = f"{path}: {member}: line {number}"
            data = load_json_object(line, where)
            if "format" in data and "url" not in data:
                continue
            pages.append(validated(PageLine, data, where))
    return pages


def parse_when(text: str | None) -> datetime | None:
    """ISO 8601 (`2022-01-18T19:00:09Z`, with or without milliseconds) or 14-17 digits; else None."""
    if not text:
        return None
    try:
        if text.isdigit() and 14 <= len(text) <= 17:
            return datetime.strptime(text[:14], "%Y%m%d%H%M%S").replace(tzinfo=UTC)
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
