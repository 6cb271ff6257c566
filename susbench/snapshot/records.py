"""Byte-level WARC reading: records found by offset, HTTP messages parsed without warcio's decoding.

warcio's iterator stops at the first bad record and decodes Content-Encoding on read; a replayer
needs the opposite (skip the damaged record, keep the rest, serve bytes as recorded), so the
record and HTTP framing is parsed here directly.
"""

from __future__ import annotations

import mmap
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from susbench.snapshot.limits import MAX_HEADER_BYTES, MAX_RECORD_BYTES, mib

GZIP_MAGIC = b"\x1f\x8b\x08"
READ_CHUNK = 1 << 16
_CONTENT_LENGTH = re.compile(r"^[0-9]{1,20}$")
_NOT_SPACE = re.compile(rb"\S")
_STATUS_LINE = re.compile(rb"^(HTTP/[0-9.]+)\s+(\d{3})(?:\s+(.*))?$")
_REQUEST_LINE = re.compile(rb"^([A-Za-z]+)\s+(\S+)(?:\s+(HTTP/[0-9.]+))?$")


class RecordDamage(Exception):
    """A record that cannot be parsed; `offset` is where it starts in its file."""

    def __init__(self, offset: int, reason: str) -> None:
        super().__init__(f"offset {offset}: {reason}")
        self.offset = offset
        self.reason = reason


def find_header(headers: list[tuple[str, str]], name: str) -> str | None:
    """First value of a header, case-insensitively (WARC and HTTP headers alike)."""
    wanted = name.lower()
    for key, value in headers:
        if key.lower() == wanted:
            return value
    return None


@dataclass(frozen=True)
class WarcRecord:
    """One parsed record: WARC headers (in order) and the raw block."""

    offset: int
    length: int
    headers: list[tuple[str, str]]
    block: bytes
    raw: bytes = field(repr=False)

    def header(self, name: str) -> str | None:
        return find_header(self.headers, name)

    @property
    def type(self) -> str:
        return (self.header("WARC-Type") or "").lower()


@dataclass(frozen=True)
class HttpMessage:
    """A request or response parsed from a record block; body still as on the wire."""

    start_line: tuple[str, str, str]
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str | None:
        return find_header(self.headers, name)


def _split_head(data: bytes, start: int) -> tuple[bytes, int] | None:
    """The header block starting at `start` and the index right after its blank line."""
    end = data.find(b"\r\n\r\n", start, start + MAX_HEADER_BYTES)
    if end != -1:
        return data[start:end], end + 4
    end = data.find(b"\n\n", start, start + MAX_HEADER_BYTES)
    if end != -1:
        return data[start:end], end + 2
    return None


def _header_lines(head: bytes) -> list[tuple[str, str]]:
    headers: list[tuple[str, str]] = []
    for line in head.replace(b"\r\n", b"\n").split(b"\n")[1:]:
        if not line.strip():
            continue
        if line[:1] in (b" ", b"\t") and headers:
            key, value = headers[-1]
            headers[-1] = (key, value + " " + line.strip().decode("latin-1"))
            continue
        name, sep, value = line.partition(b":")
        if sep:
            headers.append((name.strip().decode("latin-1"), value.strip().decode("latin-1")))
    return headers


def parse_record_at(
    data: bytes | mmap.mmap, start: int, offset: int, end: int | None = None
) -> tuple[WarcRecord, int]:
    """Parse the uncompressed record at `data[start:end]`; returns it and where the next one starts."""
    end = len(data) if end is None else end
    split = _split_head(data, start)
    if split is None or split[1] > end:
        raise RecordDamage(offset, "no end of WARC headers (truncated or not a WARC record)")
    head, block_start = split
    if not head.startswith(b"WARC/"):
        raise RecordDamage(offset, f"bad record header {bytes(head[:20])!r}, expected 'WARC/1.x'")
    headers = _header_lines(head)
    length_text = (find_header(headers, "Content-Length") or "").strip()
    if not _CONTENT_LENGTH.match(length_text):
        raise RecordDamage(offset, f"record has no valid Content-Length (got {length_text[:30]!r})")
    length = int(length_text)
    if length > MAX_RECORD_BYTES:
        raise RecordDamage(offset, f"record block of {length} bytes is over the {mib(MAX_RECORD_BYTES)} cap")
    block_end = block_start + length
    if block_end > end:
        raise RecordDamage(offset, f"record truncated: block needs {length} bytes")
    block = bytes(data[block_start:block_end])
    stop = block_end
    for trailer in (b"\r\n\r\n", b"\n\n", b"\r\n", b"\n"):
        if data[stop : stop + len(trailer)] == trailer:
            stop += len(trailer)
            break
    raw = bytes(data[start:stop])
    return WarcRecord(offset=offset, length=stop - start, headers=headers, block=block, raw=raw), stop


def parse_record(raw: bytes, offset: int = 0) -> WarcRecord:
    """Parse one record given as bytes (gzip member or plain)."""
    if raw[:3] == GZIP_MAGIC:
        raw = gunzip_member(raw, offset)
    return parse_record_at(raw, 0, offset)[0]


def gunzip_member(data: bytes, offset: int, cap: int = MAX_RECORD_BYTES) -> bytes:
    """Decompress every gzip member in `data` (a record is normally exactly one), at most `cap` bytes."""
    out: list[bytes] = []
    size = 0
    while data:
        decompressor = zlib.decompressobj(31)
        try:
            piece = decompressor.decompress(data, cap - size + 1)
        except zlib.error as exc:
            raise RecordDamage(offset, f"corrupt gzip data: {exc}") from None
        size += len(piece)
        if size > cap:
            raise RecordDamage(offset, f"decompresses to more than the {mib(cap)} cap")
        out.append(piece)
        if not decompressor.eof:
            raise RecordDamage(offset, "truncated gzip member")
        data = decompressor.unused_data
        if data and data[:3] != GZIP_MAGIC:
            break
    return b"".join(out)


Headers = list[tuple[str, str]]


def _parse_head(block: bytes, pattern: re.Pattern[bytes]) -> tuple[tuple[str, str, str], Headers, bytes]:
    split = _split_head(block, 0)
    head, body_start = split if split is not None else (block, len(block))
    first = head.replace(b"\r\n", b"\n").split(b"\n", 1)[0].strip()
    match = pattern.match(first)
    if match is None:
        raise ValueError(f"bad HTTP start line {first[:60]!r}")
    parts = tuple((group or b"").decode("latin-1") for group in match.groups())
    return (parts[0], parts[1], parts[2]), _header_lines(head), block[body_start:]


def parse_http_response(block: bytes) -> HttpMessage:
    """`HTTP/1.1 200 OK`, `HTTP/2 200` or `HTTP/2.0 200` and headers; body until the block's end."""
    start, headers, body = _parse_head(block, _STATUS_LINE)
    return HttpMessage(start_line=start, headers=headers, body=body)


def parse_http_request(block: bytes) -> HttpMessage:
    """`GET /path HTTP/1.1` and headers; body until the block's end."""
    start, headers, body = _parse_head(block, _REQUEST_LINE)
    return HttpMessage(start_line=start, headers=headers, body=body)


def dechunk(body: bytes) -> bytes:
    """Undo `Transfer-Encoding: chunked` as recorded raw; an invalid framing is returned as is."""
    out: list[bytes] = []
    position = 0
    while True:
        line_end = body.find(b"\n", position)
        if line_end == -1:
            return body
        size_text = body[position:line_end].split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            return body
        if size == 0:
            return b"".join(out)
        chunk_start = line_end + 1
        out.append(body[chunk_start : chunk_start + size])
        position = chunk_start + size
        if body[position : position + 2] == b"\r\n":
            position += 2
        elif body[position : position + 1] == b"\n":
            position += 1


def decoded_body(message: HttpMessage) -> bytes:
    chunked = "chunked" in (message.header("Transfer-Encoding") or "").lower()
    return dechunk(message.body) if chunked else message.body


@dataclass(frozen=True)
class Damage:
    """A damaged stretch of a WARC that was skipped."""

    path: str
    offset: int
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: offset {self.offset}: {self.reason}"


def _next_gzip_member(data: mmap.mmap, after: int, end: int) -> int:
    found = data.find(GZIP_MAGIC, after, end)
    return end if found == -1 else found


def _resync_plain(data: mmap.mmap, after: int, end: int) -> int:
    found = data.find(b"\nWARC/1.", after, end)
    return end if found == -1 else found + 1


def scan_warc(path: Path, start: int = 0, end: int | None = None) -> Iterator[WarcRecord | Damage]:
    """Every record of a WARC or WARC.gz in file order; damaged stretches come out as `Damage`.

    `start`/`end` select a region of the file (a WARC stored inside a zip); offsets are relative
    to `start` and count stored bytes (compressed offsets for .gz), as CDXJ and `warcio index` do.
    A damaged record is skipped by resynchronising on the next gzip member or `WARC/1.x` line.
    """
    name = str(path)
    if path.stat().st_size == 0:
        return
    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
        stop = len(data) if end is None else end
        if data[start : start + 3] == GZIP_MAGIC:
            yield from _scan_gzip(name, data, start, stop)
        else:
            yield from _scan_plain(name, data, start, stop)


def _skip_space(data: bytes | mmap.mmap, position: int, end: int) -> int:
    found = _NOT_SPACE.search(data, position, end)
    return end if found is None else found.start()


def _scan_plain(name: str, data: mmap.mmap, base: int, end: int) -> Iterator[WarcRecord | Damage]:
    position = base
    while position < end:
        position = _skip_space(data, position, end)
        if position >= end:
            break
        try:
            record, position = parse_record_at(data, position, position - base, end)
        except RecordDamage as damage:
            yield Damage(name, damage.offset, damage.reason)
            position = _resync_plain(data, base + damage.offset + 1, end)
            continue
        yield record


def _scan_gzip(name: str, data: mmap.mmap, base: int, end: int) -> Iterator[WarcRecord | Damage]:
    position = base
    while position < end:
        offset = position - base
        if data[position : position + 3] != GZIP_MAGIC:
            resync = _next_gzip_member(data, position, end)
            yield Damage(name, offset, f"{resync - position} bytes that are not a gzip member")
            position = resync
            continue
        decompressor = zlib.decompressobj(31)
        pieces: list[bytes] = []
        size = 0
        cursor = position
        try:
            while not decompressor.eof and cursor < end and size <= MAX_RECORD_BYTES:
                chunk = data[cursor : min(cursor + READ_CHUNK, end)]
                pieces.append(decompressor.decompress(chunk, MAX_RECORD_BYTES + 1 - size))
                size += len(pieces[-1])
                cursor += len(chunk) - len(decompressor.unconsumed_tail)
        except zlib.error as exc:
            yield Damage(name, offset, f"corrupt gzip member: {exc}")
            position = _next_gzip_member(data, position + 1, end)
            continue
        if size > MAX_RECORD_BYTES:
            yield Damage(
                name, offset, f"gzip member decompresses to more than the {mib(MAX_RECORD_BYTES)} cap"
            )
            position = _next_gzip_member(data, position + 1, end)
            continue
        if not decompressor.eof:
            yield Damage(name, offset, "truncated gzip member (file ends inside a record)")
            return
        member_end = cursor - len(decompressor.unused_data)
        member = b"".join(pieces)
        start = _skip_space(member, 0, len(member))
        while start < len(member):
            try:
                record, start = parse_record_at(member, start, offset, len(member))
            except RecordDamage as damage:
                yield Damage(name, offset, damage.reason)
                break
            yield replace(record, length=member_end - position)
            start = _skip_space(member, start, len(member))
        position = member_end
