"""CDXJ index lines the way pywb writes them, plus whole-body request digests and capture order.

pywb keys a POST by `__wb_method=post&<body as query>` truncated at 4 KB, so two large GraphQL
bodies collide; every non-GET entry here also carries `req_digest`, the sha256 of the whole body.
A record written in a labelled browser session (the `WARC-Susbench-Session` header) carries the
label as `session`, so replay can answer an episode from its own task's session first.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Annotated, Any, Literal
from urllib.parse import quote, unquote_plus, urlencode, urlsplit

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from susbench.core.errors import SnapshotError
from susbench.core.loading import describe_validation_error
from susbench.core.models import Frozen
from susbench.snapshot.limits import MAX_NAME_CHARS
from susbench.snapshot.records import (
    Damage,
    WarcRecord,
    decoded_body,
    parse_http_request,
    parse_http_response,
)

MAX_REQUEST_BODY_QUERY = 4096
TIMESTAMP = re.compile(r"[0-9]{14,17}")
DEFAULT_PORTS = {"http": 80, "https": 443}
INDEXED_TYPES = ("response", "revisit", "resource")
WEB_SCHEMES = ("http://", "https://")
REVISIT_MIME = "warc/revisit"
SESSION_HEADER = "WARC-Susbench-Session"


Url = Annotated[str, Field(min_length=1)]
FileName = Annotated[str, Field(min_length=1, max_length=MAX_NAME_CHARS)]
Digest = Annotated[str, Field(max_length=MAX_NAME_CHARS)]
Method = Annotated[str, Field(pattern=r"^[A-Za-z]{1,20}$")]
Status = Annotated[int, Field(ge=0, le=999)]
Offset = Annotated[int, Field(ge=0)]
Length = Annotated[int, Field(ge=1)]
Session = Annotated[str, Field(min_length=1, max_length=MAX_NAME_CHARS)]
"""Constraints shared by what we write (IndexEntry) and what we read (CdxjBlock), so an index we
write can always be read back."""


class IndexEntry(Frozen):
    """One CDXJ line: where a response (or revisit) record lives and what it answers."""

    surt: str
    timestamp: str = Field(pattern=r"^[0-9]{14,17}$", description="14 digits, or up to 17 with milliseconds")
    url: Url
    method: Method = "GET"
    status: Status | None = None
    mime: str = ""
    digest: Digest = ""
    request_body: str | None = Field(default=None, description="pywb's `requestBody` (may be truncated)")
    req_digest: Digest | None = Field(default=None, description="sha256 hex of the whole request body")
    req_offset: Offset | None = Field(default=None, description="the request record (non-GET only)")
    req_length: Length | None = None
    seq: int = Field(ge=0, description="capture order")
    filename: FileName
    offset: Offset
    length: Length
    record_type: Literal["response", "revisit"] = "response"
    session: Session | None = Field(default=None, description="the browser session it was recorded in")

    def to_cdxj(self) -> str:
        data: dict[str, Any] = {"url": self.url, "mime": self.mime}
        if self.status is not None:
            data["status"] = str(self.status)
        data |= {"digest": self.digest, "length": str(self.length), "offset": str(self.offset)}
        data["filename"] = self.filename
        if self.method != "GET":
            data["method"] = self.method
            if self.request_body is not None:
                data["requestBody"] = self.request_body
            if self.req_digest is not None:
                data["req_digest"] = self.req_digest
            if self.req_offset is not None and self.req_length is not None:
                data |= {"req_offset": str(self.req_offset), "req_length": str(self.req_length)}
        data["seq"] = self.seq
        if self.session is not None:
            data["session"] = self.session
        return f"{self.surt} {self.timestamp} {json.dumps(data, separators=(',', ':'))}"

    @classmethod
    def from_cdxj(cls, line: str, source: str = "CDXJ") -> IndexEntry:
        """Parse one `<urlkey> <timestamp> {json}` line; SnapshotError names `source` and the field."""
        parts = line.rstrip("\r\n").split(" ", 2)
        if len(parts) != 3 or not parts[2].startswith("{"):
            raise SnapshotError(f"{source}: expected '<urlkey> <timestamp> {{json}}', got {line[:60]!r}")
        key, timestamp, blob = parts
        check_timestamp(timestamp, source)
        data = load_json_object(blob, f"{source}: JSON block")
        try:
            fields = CdxjBlock.model_validate(data)
        except ValidationError as exc:
            raise SnapshotError(describe_validation_error(source, exc)) from None
        # Every field was validated by CdxjBlock (same constraints) and check_timestamp: no second pass.
        return cls.model_construct(
            surt=key,
            timestamp=timestamp,
            url=fields.url,
            method=fields.method.upper(),
            status=fields.status,
            mime=fields.mime,
            digest=fields.digest,
            request_body=fields.requestBody,
            req_digest=fields.req_digest,
            req_offset=fields.req_offset,
            req_length=fields.req_length,
            seq=fields.seq,
            filename=fields.filename,
            offset=fields.offset,
            length=fields.length,
            record_type="revisit" if fields.mime == REVISIT_MIME else "response",
            session=fields.session,
        )


def _no_status(value: object) -> object:
    return None if value in ("", "-") else value


class CdxjBlock(BaseModel):
    """The JSON block of a CDXJ line as pywb, py-wacz, Browsertrix and ArchiveWeb.page write it.

    Unknown keys (`recordDigest`, `referrer`, ...) are ignored, not refused: other tools add their own.
    Numbers may come as JSON numbers or as strings, as both occur in the wild.
    """

    model_config = ConfigDict(extra="ignore", frozen=True)

    url: Url
    filename: FileName
    offset: Offset
    length: Length
    mime: str = ""
    status: Annotated[Status | None, BeforeValidator(_no_status)] = None
    digest: Digest = ""
    method: Method = "GET"
    requestBody: str | None = None
    req_digest: Digest | None = None
    req_offset: Offset | None = None
    req_length: Length | None = None
    seq: int = Field(default=0, ge=0)
    session: Session | None = None


def check_timestamp(timestamp: str, source: str) -> None:
    if not TIMESTAMP.fullmatch(timestamp):
        raise SnapshotError(
            f"{source}: timestamp {timestamp[:30]!r}: expected 14 to 17 digits (YYYYMMDDhhmmss[mmm])"
        )


def load_json_object(text: str | bytes, where: str) -> dict[str, Any]:
    """A JSON object, or SnapshotError naming `where` (syntax, encoding, nesting or type)."""
    try:
        data = json.loads(text)
    except RecursionError:
        raise SnapshotError(f"{where}: JSON nested too deeply") from None
    except UnicodeDecodeError as exc:
        raise SnapshotError(f"{where}: not UTF-8 text (byte {exc.start})") from None
    except ValueError as exc:
        raise SnapshotError(f"{where}: invalid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise SnapshotError(f"{where}: expected a JSON object, got {type(data).__name__}")
    return data


def surt(url: str) -> str:
    """Sort-friendly URL key as pywb's `surt` package makes it (IA canonicalisation, no scheme)."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return url.strip().lower()
    host = (parts.hostname or "").strip(".").lower()
    if re.match(r"www\d*\.", host):
        host = host.split(".", 1)[1]
    key = ",".join(reversed(host.split("."))) if host else ""
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is not None and port != DEFAULT_PORTS.get(parts.scheme.lower()):
        key += f":{port}"
    path = quote(parts.path or "/", safe="/%;:@&=+$,!~*'()").lower()
    if len(path) > 1 and path.endswith("/"):
        path = path.rstrip("/") or "/"
    query = "&".join(sorted(piece for piece in parts.query.split("&") if piece)).lower()
    query = quote(query, safe="=&%;:@+$,/?!~*'()[]")
    return f"{key})" + path + (f"?{query}" if query else "")


def host_of(url: str) -> str:
    """The URL's hostname, or "" for one that does not parse."""
    try:
        return urlsplit(url).hostname or ""
    except ValueError:
        return ""


def warc_timestamp(warc_date: str) -> str:
    """`2026-11-29T10:00:00.123456Z` -> `20261129100000`."""
    digits = "".join(ch for ch in warc_date.split(".")[0] if "0" <= ch <= "9")
    return (digits + "00000000000000")[:14]


def _flatten_json(value: Any, key: str, out: list[tuple[str, str]], seen: dict[str, int]) -> None:
    if isinstance(value, dict):
        for name, item in value.items():
            _flatten_json(item, str(name), out, seen)
    elif isinstance(value, list):
        for item in value:
            _flatten_json(item, key, out, seen)
    else:
        count = seen.get(key, 0)
        seen[key] = count + 1
        name = key if count == 0 else f"{key}.{count + 1}_"
        text = "null" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
        out.append((name, text))


def method_query(method: str, content_type: str, body: bytes) -> str:
    """pywb's `__wb_method=post&...`: form bodies as query, JSON flattened, others base64."""
    mime = content_type.split(";", 1)[0].strip().lower()
    query = ""
    if mime == "application/x-www-form-urlencoded":
        query = unquote_plus(body.decode("utf-8", "replace"))
    elif mime in ("application/json", "text/plain") or mime.endswith("+json"):
        try:
            pairs: list[tuple[str, str]] = []
            _flatten_json(json.loads(body or b"null"), "", pairs, {})
            query = urlencode(pairs)
        except (ValueError, RecursionError):
            query = "" if mime == "text/plain" else "__wb_post_data=" + base64.b64encode(body).decode()
    elif body:
        query = "__wb_post_data=" + base64.b64encode(body).decode()
    text = f"__wb_method={method.lower()}" + (f"&{query}" if query else "")
    return text[:MAX_REQUEST_BODY_QUERY]


def lookup_key(method: str, url: str, content_type: str = "", body: bytes = b"") -> str:
    """The SURT an entry is filed under: POST/PUT keys carry the method query, as pywb's."""
    if method.upper() in ("GET", "HEAD", "OPTIONS"):
        return surt(url)
    joined = url + ("&" if "?" in url else "?") + method_query(method, content_type, body)
    return surt(joined)


def body_digest(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


class _RequestInfo(Frozen):
    method: str
    content_type: str
    body_query: str | None
    body_sha256: str | None
    filename: str
    offset: int
    length: int


def _request_info(record: WarcRecord, filename: str, offset: int, length: int) -> _RequestInfo | None:
    try:
        message = parse_http_request(record.block)
    except ValueError:
        return None
    method = message.start_line[0].upper()
    if method in ("GET", "HEAD"):
        return _RequestInfo(
            method=method,
            content_type="",
            body_query=None,
            body_sha256=None,
            filename=filename,
            offset=offset,
            length=length,
        )
    body = decoded_body(message)
    content_type = message.header("Content-Type") or ""
    return _RequestInfo(
        method=method,
        content_type=content_type,
        body_query=method_query(method, content_type, body),
        body_sha256=body_digest(body),
        filename=filename,
        offset=offset,
        length=length,
    )


@dataclass(frozen=True)
class _PendingResponse:
    headers: list[tuple[str, str]]
    origin: Damage
    filename: str
    offset: int
    length: int
    position: int
    status: int | None
    mime: str

    def header(self, name: str) -> str:
        wanted = name.lower()
        return next((value for key, value in self.headers if key.lower() == wanted), "")


class Indexer:
    """Builds entries from records in WARC order; pairs requests and responses afterwards.

    A response finds its request by `WARC-Concurrent-To` in either direction, else by the nearest
    request record for the same URL; without one it is indexed as a GET.
    """

    def __init__(self) -> None:
        self.damaged: list[Damage] = []
        """Records copied but not indexed: a field no index holds (a 5 KB digest, a 30-letter method)."""
        self._responses: list[_PendingResponse] = []
        self._requests_by_id: dict[str, _RequestInfo] = {}
        self._request_for: dict[str, str] = {}
        self._requests_by_url: dict[str, list[tuple[int, _RequestInfo]]] = {}
        self._position = 0

    def add(self, record: WarcRecord, filename: str, offset: int, length: int, source: str = "") -> None:
        """Feed one record stored at `offset`/`length` of archive member `filename`.

        `source` names the file the record was read from (record.offset is its offset there).
        """
        self._position += 1
        kind = record.type
        if kind == "request":
            info = _request_info(record, filename, offset, length)
            if info is None:
                return
            record_id = record.header("WARC-Record-ID") or ""
            self._requests_by_id[record_id] = info
            for other in (record.header("WARC-Concurrent-To") or "").split():
                self._request_for.setdefault(other, record_id)
            url = (record.header("WARC-Target-URI") or "").strip("<>")
            self._requests_by_url.setdefault(url, []).append((self._position, info))
        elif kind in INDEXED_TYPES and _is_capture(kind, record.header("WARC-Target-URI") or ""):
            status, mime = _revisit_status(record) if kind == "revisit" else _status_and_mime(record)
            origin = Damage(source or filename, record.offset, "")
            self._responses.append(
                _PendingResponse(
                    record.headers, origin, filename, offset, length, self._position, status, mime
                )
            )

    def _request_of(self, pending: _PendingResponse) -> _RequestInfo | None:
        for other in pending.header("WARC-Concurrent-To").split():
            if other in self._requests_by_id:
                return self._requests_by_id[other]
        record_id = pending.header("WARC-Record-ID")
        if record_id in self._request_for:
            return self._requests_by_id.get(self._request_for[record_id])
        candidates = self._requests_by_url.get(pending.header("WARC-Target-URI").strip("<>"), [])
        if not candidates:
            return None
        return min(candidates, key=lambda item: abs(item[0] - pending.position))[1]

    def entries(self) -> list[IndexEntry]:
        """All entries, sorted by SURT, timestamp, then capture order (pywb's binary search order)."""
        out: list[IndexEntry] = []
        for seq, pending in enumerate(self._responses):
            url = pending.header("WARC-Target-URI").strip("<>")
            request = self._request_of(pending)
            is_revisit = pending.header("WARC-Type").lower() == "revisit"
            key_url = url
            if request is not None and request.body_query is not None:
                key_url = url + ("&" if "?" in url else "?") + request.body_query
            try:
                entry = IndexEntry(
                    surt=surt(key_url),
                    timestamp=warc_timestamp(pending.header("WARC-Date")),
                    url=url,
                    method=request.method if request else "GET",
                    status=pending.status,
                    mime=pending.mime,
                    digest=pending.header("WARC-Payload-Digest"),
                    request_body=request.body_query if request else None,
                    req_digest=request.body_sha256 if request else None,
                    req_offset=request.offset if _has_body_record(request, pending) else None,
                    req_length=request.length if _has_body_record(request, pending) else None,
                    seq=seq,
                    filename=pending.filename,
                    offset=pending.offset,
                    length=pending.length,
                    record_type="revisit" if is_revisit else "response",
                    session=pending.header(SESSION_HEADER) or None,
                )
            except ValidationError as exc:
                reason = describe_validation_error("not indexed", exc).replace("\n", "; ")
                self.damaged.append(replace(pending.origin, reason=reason))
                continue
            out.append(entry)
        out.sort(key=lambda entry: (entry.surt, entry.timestamp, entry.seq))
        return out


def _is_capture(kind: str, uri: str) -> bool:
    """Responses and revisits with any target; resources only for http(s) (not `urn:pageinfo:`,
    `urn:text:` and the other metadata ArchiveWeb.page and Browsertrix store as resources)."""
    return bool(uri) and (kind != "resource" or uri.strip("<>").lower().startswith(WEB_SCHEMES))


def _has_body_record(request: _RequestInfo | None, pending: _PendingResponse) -> bool:
    """A body-carrying request stored in the response's own WARC, so it can be read back by offset."""
    return request is not None and request.body_sha256 is not None and request.filename == pending.filename


def _status_and_mime(record: WarcRecord) -> tuple[int | None, str]:
    content_type = (record.header("Content-Type") or "").lower()
    if "application/http" not in content_type:
        return 200, (record.header("Content-Type") or "").split(";", 1)[0].strip()
    try:
        message = parse_http_response(record.block)
    except ValueError:
        return None, ""
    mime = (message.header("Content-Type") or "").split(";", 1)[0].strip().lower()
    return int(message.start_line[1]), mime


def _revisit_status(record: WarcRecord) -> tuple[int | None, str]:
    try:
        message = parse_http_response(record.block)
    except ValueError:
        return None, REVISIT_MIME
    return int(message.start_line[1]), REVISIT_MIME


def write_cdxj(entries: Iterable[IndexEntry]) -> bytes:
    return "".join(entry.to_cdxj() + "\n" for entry in entries).encode("utf-8")
