"""Every index format a WACZ carries: CDXJ, classic CDX, and ZipNum (`.cdx.gz` blocks listed in `.idx`).

ArchiveWeb.page writes `indexes/index.cdx` (CDXJ, 17-digit timestamps); py-wacz and Browsertrix write
ZipNum: gzip blocks of CDXJ lines in `indexes/index.cdx.gz`, each block listed with its first key,
offset, length and digest in `indexes/index.idx`. pywb's older tools write 11-field CDX.
"""

from __future__ import annotations

import hashlib
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path

from susbench.core.errors import SnapshotError
from susbench.snapshot.cdxj import IndexEntry, check_timestamp, load_json_object, surt
from susbench.snapshot.limits import MAX_INDEX_BYTES, MAX_INDEX_LINE_BYTES, MAX_NAME_CHARS, mib, shown
from susbench.snapshot.package import read_member

INDEX_PREFIX = "indexes/"
TEXT_SUFFIXES = (".cdx", ".cdxj")
ZIPNUM_SUFFIX = ".cdx.gz"
IDX_SUFFIX = ".idx"
IDX_FORMAT = "cdxj-gzip-1.0"
GUNZIP_CHUNK = 1 << 16
CDX11_LEGEND = ["N", "b", "a", "m", "s", "k", "r", "M", "S", "V", "g"]
"""Classic CDX field letters (pywb/IA): urlkey, timestamp, url, mime, status, digest, redirect, meta,
length, offset, filename."""


def index_members(names: list[str]) -> list[str]:
    return sorted(
        name
        for name in names
        if name.startswith(INDEX_PREFIX) and name.endswith((*TEXT_SUFFIXES, ZIPNUM_SUFFIX, IDX_SUFFIX))
    )


class _Budget:
    """Decompressed bytes left for all indexes of one WACZ (a bomb stops at the cap)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.left = MAX_INDEX_BYTES

    def take(self, size: int, member: str) -> None:
        self.left -= size
        if self.left < 0:
            raise SnapshotError(f"{self.path}: {member}: indexes exceed the {mib(MAX_INDEX_BYTES)} cap")


def read_indexes(archive: zipfile.ZipFile, path: Path) -> list[IndexEntry] | None:
    """All entries of all index members, in SURT order with a unique capture order (`seq`).

    None when the WACZ has no index member at all (the caller then indexes the WARCs).
    """
    members = index_members(archive.namelist())
    if not members:
        return None
    budget = _Budget(path)
    entries: list[IndexEntry] = []
    zipnum_read: set[str] = set()
    for member in members:
        if member.endswith(IDX_SUFFIX):
            entries.extend(_read_zipnum(archive, path, member, budget, zipnum_read))
    for member in members:
        if member.endswith(TEXT_SUFFIXES):
            data = read_member(archive, path, member, MAX_INDEX_BYTES)
            budget.take(len(data), member)
            entries.extend(parse_index_text(data, f"{path}: {member}"))
        elif member.endswith(ZIPNUM_SUFFIX) and member not in zipnum_read:
            data = _gunzip_all(
                read_member(archive, path, member, MAX_INDEX_BYTES), f"{path}: {member}", budget
            )
            entries.extend(parse_index_text(data, f"{path}: {member}"))
    return number_captures(entries)


def number_captures(entries: list[IndexEntry]) -> list[IndexEntry]:
    """Keep `seq` when it is a unique capture order (ours); else number by time, file and offset."""
    if len({entry.seq for entry in entries}) != len(entries):
        ordered = sorted(entries, key=lambda e: (e.timestamp.ljust(17, "0"), e.filename, e.offset))
        entries = [entry.model_copy(update={"seq": seq}) for seq, entry in enumerate(ordered)]
    return sorted(entries, key=lambda entry: (entry.surt, entry.timestamp, entry.seq))


def _lines(data: bytes, source: str) -> Iterator[tuple[str, str]]:
    """(where, text) of every non-empty line; a line that is too long or not UTF-8 is an error."""
    for number, raw in enumerate(data.splitlines(), start=1):
        where = f"{source}: line {number}"
        if len(raw) > MAX_INDEX_LINE_BYTES:
            raise SnapshotError(
                f"{where}: line of {len(raw)} bytes is over the {mib(MAX_INDEX_LINE_BYTES)} cap"
            )
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SnapshotError(f"{where}: not UTF-8 text (byte {exc.start})") from None
        if text.strip():
            yield where, text


def parse_index_text(data: bytes, source: str) -> list[IndexEntry]:
    """CDXJ lines, or classic CDX lines (after a ` CDX ...` legend, or 11 fields without one)."""
    entries: list[IndexEntry] = []
    legend = CDX11_LEGEND
    for where, line in _lines(data, source):
        if line.startswith(" CDX ") or line.startswith("CDX "):
            legend = line.split()[1:]
            continue
        if line.startswith("!"):
            continue
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[2].startswith("{"):
            entries.append(IndexEntry.from_cdxj(line, where))
        else:
            entries.append(_from_cdx(line.split(), legend, where))
    return entries


def _from_cdx(fields: list[str], legend: list[str], where: str) -> IndexEntry:
    if len(fields) != len(legend):
        raise SnapshotError(
            f"{where}: expected a CDXJ line or the {len(legend)} CDX fields "
            f"{shown(' '.join(legend))}, got {len(fields)}"
        )
    row = dict(zip(legend, fields, strict=True))
    missing = [letter for letter in ("a", "b", "S", "V", "g") if row.get(letter, "-") == "-"]
    if missing:
        raise SnapshotError(
            f"{where}: CDX field(s) {', '.join(missing)} missing: the record cannot be located"
        )
    check_timestamp(row["b"], where)
    for letter in ("g", "k"):
        if len(row.get(letter, "")) > MAX_NAME_CHARS:
            raise SnapshotError(f"{where}: CDX field {letter}: expected at most {MAX_NAME_CHARS} characters")
    numbers: dict[str, int] = {}
    for letter, name in (("S", "length"), ("V", "offset"), ("s", "status")):
        text = row.get(letter, "-")
        if text == "-":
            continue
        if not text.isascii() or not text.isdigit() or len(text) > 18:
            raise SnapshotError(f"{where}: CDX field {letter} ({name}): expected a number, got {text[:30]!r}")
        numbers[name] = int(text)
    if numbers["length"] < 1:
        raise SnapshotError(f"{where}: CDX field S (length): expected at least 1 byte")
    mime = row.get("m", "")
    return IndexEntry(
        surt=row.get("N") or surt(row["a"]),
        timestamp=row["b"],
        url=row["a"],
        status=numbers.get("status"),
        mime="" if mime == "-" else mime,
        digest=row.get("k", "").replace("-", ""),
        seq=0,
        filename=row["g"],
        offset=numbers["offset"],
        length=numbers["length"],
        record_type="revisit" if mime == "warc/revisit" else "response",
    )


def _gunzip_all(data: bytes, source: str, budget: _Budget) -> bytes:
    """Every gzip member of `data` in turn (a ZipNum file is many), within the index budget."""
    view = memoryview(data)
    out: list[bytes] = []
    position = 0
    while position < len(data):
        decompressor = zlib.decompressobj(31)
        cursor = position
        try:
            while not decompressor.eof and cursor < len(data):
                chunk = view[cursor : cursor + GUNZIP_CHUNK]
                out.append(decompressor.decompress(chunk, budget.left + 1))
                budget.take(len(out[-1]), source)
                cursor += len(chunk) - len(decompressor.unconsumed_tail)
        except zlib.error as exc:
            raise SnapshotError(f"{source}: offset {position}: corrupt gzip block: {exc}") from None
        if not decompressor.eof:
            raise SnapshotError(f"{source}: offset {position}: truncated gzip block")
        position = cursor - len(decompressor.unused_data)
    return b"".join(out)


def _read_zipnum(
    archive: zipfile.ZipFile, path: Path, idx_member: str, budget: _Budget, read: set[str]
) -> list[IndexEntry]:
    """Read the blocks an `.idx` lists from its `.cdx.gz`, checking each block's digest when given."""
    idx_data = read_member(archive, path, idx_member, MAX_INDEX_BYTES)
    folder = idx_member.rsplit("/", 1)[0] + "/"
    default_file = Path(idx_member).name.removesuffix(IDX_SUFFIX) + ZIPNUM_SUFFIX
    blobs: dict[str, bytes] = {}
    entries: list[IndexEntry] = []
    for where, line in _lines(idx_data, f"{path}: {idx_member}"):
        if line.startswith("!meta"):
            if "{" not in line:
                raise SnapshotError(f"{where}: expected '!meta 0 {{json}}'")
            meta = load_json_object(line[line.find("{") :], where)
            if meta.get("format", IDX_FORMAT) != IDX_FORMAT:
                raise SnapshotError(
                    f"{where}: field 'format': expected {IDX_FORMAT!r}, got {shown(meta.get('format'))}"
                )
            default_file = _index_file(str(meta.get("filename") or default_file), where)
            continue
        filename, offset, length, digest = _idx_block(line, where, default_file)
        member = folder + filename
        if member not in blobs:
            blobs[member] = read_member(archive, path, member, MAX_INDEX_BYTES)
            read.add(member)
        block = blobs[member][offset : offset + length]
        if len(block) != length:
            raise SnapshotError(f"{where}: block {offset}+{length} lies outside {member}")
        if digest:
            algorithm, _, expected = digest.partition(":")
            if (
                algorithm not in ("sha256", "sha1", "md5")
                or hashlib.new(algorithm, block).hexdigest() != expected
            ):
                raise SnapshotError(f"{where}: block {offset}+{length} of {member} does not match its digest")
        text = _gunzip_all(block, f"{path}: {member}: block at {offset}", budget)
        entries.extend(parse_index_text(text, f"{path}: {member}: block at {offset}"))
    return entries


def _idx_block(line: str, where: str, default_file: str) -> tuple[str, int, int, str]:
    """(file, offset, length, digest) of one `.idx` line: JSON (cdxj-gzip-1.0) or pywb's tab form."""
    if "\t" in line:
        fields = line.split("\t")
        if len(fields) < 4:
            raise SnapshotError(f"{where}: expected 'key<TAB>file<TAB>offset<TAB>length'")
        filename, offset_text, length_text, digest = fields[1], fields[2], fields[3], ""
    else:
        start = line.find(" {")
        if start < 0:
            raise SnapshotError(f"{where}: expected '<key> <timestamp> {{json}}' or a tab-separated line")
        data = load_json_object(line[start + 1 :], where)
        filename = str(data.get("filename") or default_file)
        offset_text, length_text, digest = (
            str(data.get("offset")),
            str(data.get("length")),
            str(data.get("digest") or ""),
        )
    numbers = []
    for name, text in (("offset", offset_text), ("length", length_text)):
        if not text.isascii() or not text.isdigit() or len(text) > 18:
            raise SnapshotError(f"{where}: field '{name}': expected a number, got {text[:30]!r}")
        numbers.append(int(text))
    return _index_file(filename, where), numbers[0], numbers[1], digest


def _index_file(filename: str, where: str) -> str:
    """A ZipNum block file named by an `.idx`: a plain name in indexes/, not a path."""
    if "/" in filename or filename in ("", ".", "..") or len(filename) > MAX_NAME_CHARS:
        raise SnapshotError(
            f"{where}: field 'filename': expected a file name in indexes/, got {shown(filename)}"
        )
    return filename
