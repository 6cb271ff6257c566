"""HAR files (HTTP Archive 1.2: Playwright's `record_har_path`, browser DevTools, trace collectors) as
WARC records, so `susbench snapshot import x.har` makes a snapshot of what the HAR holds.

Every entry with its response body becomes a response record and its request record, at the entry's
own start time. A HAR stores bodies decoded, so the encodings it no longer has (Content-Encoding,
Transfer-Encoding) are dropped and Content-Length is the body's; HTTP/2 pseudo-headers are dropped.
Entries without a body the HAR kept (no text, yet a size or a Content-Length, or no size at all as
Firefox writes for bodies it did not save), and failed requests (status 0), are left out and counted.
A 304 whose body the HAR kept (DevTools and Firefox save the cached body they showed) is stored as a
200: replayed to a browser with an empty cache, a 304 would leave it nothing to show.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from susbench import __version__
from susbench.core.errors import SnapshotError

HAR_SUFFIX = ".har"
DROPPED_HEADERS = {"content-encoding", "transfer-encoding", "content-length"}
NOT_MODIFIED = 304


class _Har(BaseModel):
    # HAR is another tool's format: its many optional and custom (`_initiator`...) fields are ignored.
    model_config = ConfigDict(frozen=True, extra="ignore")


class HarHeader(_Har):
    name: str
    value: str


class HarPostData(_Har):
    mimeType: str = ""
    text: str = ""


class HarRequest(_Har):
    method: str
    url: str
    headers: tuple[HarHeader, ...] = ()
    postData: HarPostData | None = None


class HarContent(_Har):
    size: int | None = None
    mimeType: str = ""
    text: str | None = None
    encoding: str | None = None


class HarResponse(_Har):
    status: int
    statusText: str = ""
    headers: tuple[HarHeader, ...] = ()
    content: HarContent


class HarEntry(_Har):
    startedDateTime: datetime
    request: HarRequest
    response: HarResponse


class HarLog(_Har):
    entries: tuple[HarEntry, ...] = Field(min_length=1)


class HarFile(_Har):
    log: HarLog


def is_har(path: Path) -> bool:
    return path.name.lower().endswith(HAR_SUFFIX)


def load_har(path: Path) -> HarFile:
    """The HAR's entries; a clear error naming the file (and the field) when it is not one."""
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise SnapshotError(f"{path}: not a HAR file (JSON): {exc}") from None
    try:
        return HarFile.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise SnapshotError(f"{path}: not a HAR file: {where}: {first['msg']}") from None


def _declared_length(response: HarResponse) -> int | None:
    for header in response.headers:
        if header.name.lower() == "content-length" and header.value.strip().isdigit():
            return int(header.value)
    return None


def _body(path: Path, index: int, response: HarResponse) -> bytes | None:
    """The response body as it was sent (decoded); None when the HAR did not keep it. Without text,
    a body is empty only when the HAR says so (size 0) and the headers do not declare one: Chromium's
    own requests (the favicon) are recorded with a size and a Content-Length but no text, Firefox's
    unsaved bodies with no size; a 304 without text says nothing of its body."""
    content = response.content
    if content.text is None:
        empty = content.size == 0 and response.status != NOT_MODIFIED and not _declared_length(response)
        return b"" if empty else None
    if content.encoding not in (None, "", "base64"):
        raise SnapshotError(
            f"{path}: log.entries.{index}.response.content.encoding: {content.encoding!r}, not base64"
        )
    if content.encoding == "base64":
        try:
            return base64.b64decode(content.text, validate=True)
        except binascii.Error:
            raise SnapshotError(f"{path}: log.entries.{index}.response.content.text: not base64") from None
    return content.text.encode("utf-8")


def _kept(headers: Sequence[HarHeader]) -> list[tuple[str, str]]:
    return [
        (header.name, header.value)
        for header in headers
        if not header.name.startswith(":") and header.name.lower() not in DROPPED_HEADERS
    ]


def _target(url: str) -> str:
    rest = url.split("/", 3)
    return "/" + (rest[3] if len(rest) > 3 else "")


def write_har_warc(path: Path, out: Path) -> tuple[Path, int]:
    """A WARC/1.1 (.warc.gz) of the HAR's entries, and how many entries were left out."""
    har = load_har(path)
    left_out = 0
    with open(out, "wb") as handle:
        writer = WARCWriter(handle, gzip=True, warc_version="1.1")
        info = {"software": f"susbench {__version__}", "format": "WARC File Format 1.1", "source": path.name}
        writer.write_record(writer.create_warcinfo_record(out.name, info))
        for index, entry in enumerate(har.log.entries):
            body = _body(path, index, entry.response)
            url = entry.request.url.split("#", 1)[0]
            if body is None or entry.response.status <= 0 or not url.startswith(("http://", "https://")):
                left_out += 1
                continue
            date = entry.startedDateTime.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            status = (
                "200 OK"
                if entry.response.status == NOT_MODIFIED
                else f"{entry.response.status} {entry.response.statusText}".strip()
            )
            headers = [*_kept(entry.response.headers), ("Content-Length", str(len(body)))]
            if entry.response.content.mimeType and not any(n.lower() == "content-type" for n, _ in headers):
                headers.append(("Content-Type", entry.response.content.mimeType))
            response = writer.create_warc_record(
                url,
                "response",
                payload=io.BytesIO(body),
                http_headers=StatusAndHeaders(status, headers, protocol="HTTP/1.1"),
                warc_headers_dict={"WARC-Date": date, "WARC-Record-ID": f"<urn:uuid:{uuid.uuid4()}>"},
            )
            sent = entry.request.postData.text.encode("utf-8") if entry.request.postData else b""
            request_headers = _kept(entry.request.headers)
            if not any(name.lower() == "host" for name, _ in request_headers):
                request_headers.insert(0, ("Host", url.split("/")[2]))
            if sent:
                request_headers.append(("Content-Length", str(len(sent))))
            request = writer.create_warc_record(
                url,
                "request",
                payload=io.BytesIO(sent),
                http_headers=StatusAndHeaders(
                    f"{entry.request.method} {_target(url)} HTTP/1.1", request_headers, is_http_request=True
                ),
                warc_headers_dict={
                    "WARC-Date": date,
                    "WARC-Concurrent-To": response.rec_headers.get_header("WARC-Record-ID"),
                },
            )
            writer.write_record(response)
            writer.write_record(request)
    if left_out == len(har.log.entries):
        raise SnapshotError(f"{path}: no entry of the HAR kept its response body")
    return out, left_out
