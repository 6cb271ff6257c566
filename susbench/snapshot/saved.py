"""Saved HTML pages (`.html`, `.html.gz`) as WARC records under the URLs they were saved from.

A page saved from a browser or a crawler is only its document: the URL map says where it came from
(and, optionally, when), and each page becomes a `response` record (with its `request`) at that URL,
dated its capture time, body as saved. `import_warc` then indexes them like any other WARC's.

The URL map is JSON or YAML, one entry per page, keyed by the file's name relative to the map's
folder (a name without its `.html` / `.html.gz` suffix is found too):

    {"shoe.html.gz": "https://shop.example/p/shoe",
     "mug.html": {"url": "https://shop.example/p/mug", "captured_at": "2021-02-03T10:56:56Z"}}
"""

from __future__ import annotations

import gzip
import io
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, RootModel, ValidationError
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from susbench import __version__
from susbench.core.errors import InputError, SnapshotError
from susbench.core.loading import describe_validation_error, read_data_file
from susbench.core.models import Frozen

SAVED_SUFFIXES = (".html.gz", ".htm.gz", ".html", ".htm")
MAX_PAGE_BYTES = 64 * 1024 * 1024


def _web_url(url: str) -> str:
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"expected an http(s) URL, got {url[:80]!r}")
    return url


WebUrl = Annotated[str, AfterValidator(_web_url)]


class MapEntry(BaseModel):
    """Where one saved page came from, and when (default: the file's modification time)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    url: WebUrl
    captured_at: datetime | None = None


class UrlMap(RootModel[dict[str, WebUrl | MapEntry]]):
    """File name -> original URL, or {url, captured_at}."""


class SavedPage(Frozen):
    """One saved document and the URL and time it is archived under."""

    path: Path
    url: str
    captured_at: datetime


def is_saved_html(path: Path) -> bool:
    return path.name.lower().endswith(SAVED_SUFFIXES)


def read_saved(path: Path) -> bytes:
    """The document as saved (gunzipped when the file is); errors name the file."""
    try:
        data = path.read_bytes()
        if path.name.lower().endswith(".gz"):
            with gzip.open(io.BytesIO(data)) as stream:
                data = stream.read(MAX_PAGE_BYTES + 1)
    except (OSError, EOFError) as exc:
        raise SnapshotError(f"{path}: not a readable saved page ({exc})") from None
    if len(data) > MAX_PAGE_BYTES:
        raise SnapshotError(f"{path}: over {MAX_PAGE_BYTES // 2**20} MiB; not a saved page")
    return data


def _file_for(folder: Path, key: str) -> Path | None:
    for name in (key, *(key + suffix for suffix in SAVED_SUFFIXES)):
        candidate = folder / name
        if candidate.is_file() and is_saved_html(candidate):
            return candidate
    return None


def load_url_map(path: Path) -> list[SavedPage]:
    """Every page the map names, in the map's order; a missing file or a bad URL names the map and key."""
    data = read_data_file(path)
    try:
        entries = UrlMap.model_validate(data).root
    except ValidationError as exc:
        raise InputError(describe_validation_error(f"{path}: URL map", exc)) from None
    pages = []
    for key, entry in entries.items():
        found = _file_for(path.parent, key)
        if found is None:
            raise InputError(
                f"{path}: entry {key!r}: no saved page {key} (or {key}.html, {key}.html.gz) in {path.parent}"
            )
        entry = entry if isinstance(entry, MapEntry) else MapEntry(url=entry)
        when = entry.captured_at or datetime.fromtimestamp(found.stat().st_mtime, UTC)
        pages.append(SavedPage(path=found, url=entry.url, captured_at=when.astimezone(UTC)))
    return pages


def pages_for(files: Sequence[Path], url_map: Path | None) -> list[SavedPage]:
    """The saved pages to import: those of `files` (each must be in the map), or, when no saved page
    is given, every page the map names."""
    if url_map is None:
        if files:
            raise InputError(
                f"{files[0]}: a saved page needs its original URL; expected --url-map FILE "
                "(JSON or YAML: file name -> URL)"
            )
        return []
    mapped = load_url_map(url_map)
    if not files:
        return mapped
    by_file = {page.path.resolve(): page for page in mapped}
    missing = [path for path in files if path.resolve() not in by_file]
    if missing:
        raise InputError(
            f"{missing[0]}: not in the URL map {url_map}; expected an entry named {missing[0].name}"
        )
    return [by_file[path.resolve()] for path in files]


def _content_type(body: bytes) -> str:
    """UTF-8 is said out loud; anything else is left to the page's own `<meta charset>`, as a browser
    opening the saved file would."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return "text/html"
    return "text/html; charset=utf-8"


def write_saved_warc(pages: Sequence[SavedPage], out: Path) -> Path:
    """A WARC/1.1 (.warc.gz) holding a warcinfo, then a response and its request for each page."""
    with open(out, "wb") as handle:
        writer = WARCWriter(handle, gzip=True, warc_version="1.1")
        info = {
            "software": f"susbench {__version__}",
            "format": "WARC File Format 1.1",
            "source": "saved pages",
        }
        writer.write_record(writer.create_warcinfo_record(out.name, info))
        for page in pages:
            target = page.url.split("#", 1)[0]
            body = read_saved(page.path)
            date = page.captured_at.strftime("%Y-%m-%dT%H:%M:%SZ")
            headers = StatusAndHeaders(
                "200 OK",
                [("Content-Type", _content_type(body)), ("Content-Length", str(len(body)))],
                protocol="HTTP/1.1",
            )
            response = writer.create_warc_record(
                target,
                "response",
                payload=io.BytesIO(body),
                http_headers=headers,
                warc_headers_dict={"WARC-Date": date, "WARC-Record-ID": f"<urn:uuid:{uuid.uuid4()}>"},
            )
            host = target.split("/")[2]
            request = writer.create_warc_record(
                target,
                "request",
                payload=io.BytesIO(b""),
                http_headers=StatusAndHeaders(
                    f"GET {_request_path(target)} HTTP/1.1", [("Host", host)], is_http_request=True
                ),
                warc_headers_dict={
                    "WARC-Date": date,
                    "WARC-Concurrent-To": response.rec_headers.get_header("WARC-Record-ID"),
                },
            )
            writer.write_record(response)
            writer.write_record(request)
    return out


def _request_path(url: str) -> str:
    rest = url.split("/", 3)
    return "/" + (rest[3] if len(rest) > 3 else "")
