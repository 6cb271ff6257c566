"""ReplayWeb.page (Webrecorder's in-browser WACZ viewer, wabac.js inside) served on loopback for tests.

Its `ui.js` and `sw.js` come from the npm package `replaywebpage`, fetched into the cache by
`make tools` (AGPL-3.0-or-later; used here as a tool, not shipped). The WACZ is served by a static
server that answers Range requests, as ReplayWeb.page reads a WACZ's zip directory and records by
ranges.
"""

from __future__ import annotations

import io
import re
import shutil
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tests.support.outside_tools import RWP_FILES

EMBED_PAGE = """<!doctype html>
<html><head><script src="ui.js"></script></head>
<body><replay-web-page source="{source}" url="{url}" style="display:block;width:1200px;height:800px">
</replay-web-page></body></html>
"""
_RANGE = re.compile(r"bytes=(\d*)-(\d*)$")


class RangeRequestHandler(SimpleHTTPRequestHandler):
    """Static files with single byte ranges (`bytes=a-b`, `bytes=a-`, `bytes=-n`), quietly."""

    def log_message(self, format: str, *args: object) -> None:
        pass

    def send_head(self) -> io.BytesIO | None:  # type: ignore[override]
        path = Path(self.translate_path(self.path))
        wanted = _RANGE.match(self.headers.get("Range", ""))
        if wanted is None or not path.is_file():
            return super().send_head()  # type: ignore[return-value]
        size = path.stat().st_size
        first, last = wanted.groups()
        start = int(first) if first else max(size - int(last or 0), 0)
        end = min(int(last), size - 1) if first and last else size - 1
        with open(path, "rb") as handle:
            handle.seek(start)
            data = handle.read(end - start + 1)
        self.send_response(206)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        return io.BytesIO(data)


@contextmanager
def replaywebpage_site(rwp: Path, wacz: Path, url: str) -> Iterator[str]:
    """A loopback site embedding `wacz` at `url`; yields the embed page's address."""
    with tempfile.TemporaryDirectory(prefix="susbench-rwp-site-") as tmp:
        site = Path(tmp)
        (site / "replay").mkdir()
        for name in RWP_FILES:
            shutil.copy(rwp / name, site / name)
            shutil.copy(rwp / name, site / "replay" / name)
        shutil.copy(wacz, site / "archive.wacz")
        (site / "embed.html").write_text(EMBED_PAGE.format(source="archive.wacz", url=url), encoding="utf-8")
        server = ThreadingHTTPServer(("127.0.0.1", 0), partial(RangeRequestHandler, directory=str(site)))
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}/embed.html"
        finally:
            server.shutdown()
            server.server_close()
