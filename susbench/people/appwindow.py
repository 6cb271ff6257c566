"""A window of the person's own, outside every page: a Chromium --app window with a throw-away
profile, showing pages from a loopback server whose every path starts with a secret token.

The episode's page runs in another browser process and profile, so it finds nothing of such a
window by DOM, events, messages or storage, and cannot guess the token to act through its server.
The window dies with the process that opened it, even by SIGKILL (`dying_with_parent`). Every POST
must carry `Content-Type: application/json`, which a cross-site `no-cors` request cannot send.
"""

from __future__ import annotations

import secrets
import shutil
import subprocess
import tempfile
import threading
from abc import ABC, abstractmethod
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import NamedTuple, Protocol, Self

from pydantic import Field

from susbench.browser import QUIET_FLAGS, find_chromium
from susbench.core.errors import BrowserError
from susbench.core.models import Frozen
from susbench.people.screen import dying_with_parent

NO_FLAG_BAR = "--test-type"
"""Keeps Chromium's "unsupported command-line flag" bar (about --no-sandbox) off the person's screen."""

MAX_BODY = 64 * 1024


class WindowPlacement(Frozen):
    """Where the window sits on the person's screen, in screen pixels."""

    x: int = Field(default=0, ge=0)
    y: int = Field(default=0, ge=0)
    width: int = Field(default=380, ge=200)
    height: int = Field(default=900, ge=200)

    def window_args(self) -> tuple[str, ...]:
        return (f"--window-position={self.x},{self.y}", f"--window-size={self.width},{self.height}")


class PageResponse(NamedTuple):
    status: HTTPStatus
    body: bytes = b""
    kind: str = "text/plain; charset=utf-8"


class Pages(Protocol):
    """What the window's server answers, by the path after the token ("" is the window's page)."""

    def get(self, name: str) -> PageResponse | None: ...

    def post(self, name: str, body: bytes) -> PageResponse | None: ...


class AppWindow:
    """The server and the window; `closed` once the person (or a crash) closed the window."""

    def __init__(
        self, pages: Pages, placement: WindowPlacement, token: str, executable: Path | None = None
    ) -> None:
        self.pages = pages
        self.placement = placement
        self.token = token
        self.executable = executable
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._window: subprocess.Popen[bytes] | None = None
        self._profile = Path(tempfile.mkdtemp(prefix="susbench-window-"))

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}/{self.token}/"

    @property
    def closed(self) -> bool:
        return self._window is None or self._window.poll() is not None

    @property
    def exit_code(self) -> int | None:
        """The window's Chromium's exit status once it ended (negative: the signal that ended it)."""
        return None if self._window is None else self._window.poll()

    def __enter__(self) -> AppWindow:
        threading.Thread(target=self._server.serve_forever, daemon=True, name="app-window").start()
        executable = self.executable or find_chromium()
        command = [
            str(executable),
            *QUIET_FLAGS,
            "--no-sandbox",
            NO_FLAG_BAR,
            f"--user-data-dir={self._profile}",
            *self.placement.window_args(),
            f"--app={self.url}",
        ]
        try:
            self._window = subprocess.Popen(
                dying_with_parent(command), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
        except OSError as exc:
            self.__exit__()
            raise BrowserError(f"{executable}: the person's window failed to start: {exc}") from None
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._window is not None:
            self._window.terminate()
            try:
                self._window.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._window.kill()
                self._window.wait()
        self._server.shutdown()
        self._server.server_close()
        shutil.rmtree(self._profile, ignore_errors=True)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        window = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                """Quiet: the window's requests are not the episode's traffic."""

            def _answer(self, answer: PageResponse | None) -> None:
                answer = answer or PageResponse(HTTPStatus.NOT_FOUND)
                self.send_response(answer.status)
                self.send_header("Content-Type", answer.kind)
                self.send_header("Content-Length", str(len(answer.body)))
                self.send_header("Cache-Control", "no-store")
                self.send_header("Referrer-Policy", "no-referrer")
                self.end_headers()
                self.wfile.write(answer.body)

            def _name(self) -> str | None:
                prefix = f"/{window.token}/"
                return self.path.removeprefix(prefix) if self.path.startswith(prefix) else None

            def do_GET(self) -> None:
                name = self._name()
                self._answer(None if name is None else window.pages.get(name))

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(min(length, MAX_BODY))
                name = self._name()
                if name is None:
                    self._answer(None)
                elif self.headers.get("Content-Type") != "application/json":
                    self._answer(
                        PageResponse(HTTPStatus.BAD_REQUEST, b"expected Content-Type: application/json")
                    )
                else:
                    self._answer(window.pages.post(name, body))

        return Handler


class WindowedPages(ABC):
    """Pages a person sees in their own `AppWindow`, open while the `with` block runs."""

    def __init__(self, placement: WindowPlacement, executable: Path | None) -> None:
        self.token = secrets.token_urlsafe(24)
        self._window = AppWindow(self, placement, self.token, executable)

    @abstractmethod
    def get(self, name: str) -> PageResponse | None: ...

    @abstractmethod
    def post(self, name: str, body: bytes) -> PageResponse | None: ...

    @property
    def url(self) -> str:
        return self._window.url

    @property
    def window(self) -> AppWindow:
        """The window these pages are shown in (whether it is still open, and how it ended)."""
        return self._window

    def __enter__(self) -> Self:
        self._window.__enter__()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._window.__exit__(*exc_info)
