"""The person's task controls, in a browser process of their own where no page script can reach them.

The episode's Chromium carries only the injection extension; the instruction, the timer, "Done" and
"Give up" live in a second Chromium (an app window with its own throw-away profile) beside it,
served from a loopback server whose every path starts with a secret token. So the episode's page
finds nothing by DOM, events, messages or storage (different process and profile), and cannot
guess the token to press a control by itself.
"""

from __future__ import annotations

import html
import json
import secrets
import shutil
import subprocess
import tempfile
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.resources import files
from pathlib import Path
from string import Template
from typing import Literal

from pydantic import Field, ValidationError

from susbench.browser import QUIET_FLAGS, find_chromium
from susbench.errors import BrowserError
from susbench.models import Frozen

PAGE = Template(files("susbench.people").joinpath("control.html").read_text(encoding="utf-8"))
NO_FLAG_BAR = "--test-type"
"""Keeps Chromium's "unsupported command-line flag" bar (about --no-sandbox) off the person's screen."""


class Placement(Frozen):
    """Where the controls' window sits on the person's screen, in screen pixels."""

    x: int = Field(default=0, ge=0)
    y: int = Field(default=0, ge=0)
    width: int = Field(default=380, ge=200)
    height: int = Field(default=900, ge=200)

    def window_args(self) -> tuple[str, ...]:
        return (f"--window-position={self.x},{self.y}", f"--window-size={self.width},{self.height}")


class Finish(Frozen):
    """How the person ended the task, and after how many seconds."""

    how: Literal["done", "give_up"]
    elapsed_s: float = Field(ge=0)


class _Request(Frozen):
    how: Literal["done", "give_up"]


def control_page(instruction: str, seconds_left: float) -> str:
    """The controls' HTML: the instruction, a countdown, Done and Give up (window title: `Task: ...`)."""
    return PAGE.substitute(instruction=html.escape(instruction), seconds=f"{seconds_left:.0f}")


class ControlPanel:
    """One episode's controls: a loopback server and the window showing them; `wait` for the person."""

    def __init__(
        self, instruction: str, seconds: float, placement: Placement, executable: Path | None = None
    ) -> None:
        self.instruction = instruction
        self.seconds = seconds
        self.placement = placement
        self.executable = executable
        self.token = secrets.token_urlsafe(24)
        self._finished = threading.Event()
        self._finish: Finish | None = None
        self._started = time.monotonic()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._window: subprocess.Popen[bytes] | None = None
        self._profile = Path(tempfile.mkdtemp(prefix="susbench-controls-"))

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}/{self.token}/"

    def __enter__(self) -> ControlPanel:
        threading.Thread(target=self._server.serve_forever, daemon=True, name="controls").start()
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
            self._window = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except OSError as exc:
            self.__exit__()
            raise BrowserError(f"{executable}: the controls' window failed to start: {exc}") from None
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

    def wait(self, timeout: float) -> Finish | None:
        """The person's Done or Give up, or None when `timeout` seconds pass first."""
        self._finished.wait(max(timeout, 0.0))
        return self._finish

    def _page(self) -> bytes:
        left = max(0.0, self.seconds - (time.monotonic() - self._started))
        return control_page(self.instruction, left).encode("utf-8")

    def _record(self, body: bytes) -> bool:
        try:
            request = _Request.model_validate(json.loads(body))
        except (ValueError, ValidationError):
            return False
        if not self._finished.is_set():
            self._finish = Finish(how=request.how, elapsed_s=round(time.monotonic() - self._started, 3))
            self._finished.set()
        return True

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        panel = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                """Quiet: the controls' requests are not the episode's traffic."""

            def _answer(self, status: HTTPStatus, body: bytes = b"", kind: str = "text/plain") -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.send_header("Referrer-Policy", "no-referrer")
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                if self.path != f"/{panel.token}/":
                    self._answer(HTTPStatus.NOT_FOUND)
                    return
                self._answer(HTTPStatus.OK, panel._page(), "text/html; charset=utf-8")

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(min(length, 4096))
                if self.path != f"/{panel.token}/finish":
                    self._answer(HTTPStatus.NOT_FOUND)
                elif self.headers.get("Content-Type") != "application/json" or not panel._record(body):
                    self._answer(HTTPStatus.BAD_REQUEST, b'expected {"how": "done" | "give_up"}')
                else:
                    self._answer(HTTPStatus.NO_CONTENT)

        return Handler
