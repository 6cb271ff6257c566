"""The person's task controls, in a browser process of their own where no page script can reach them.

The episode's Chromium carries only the injection extension; the instruction, the timer, "Done" and
"Give up" live in an `AppWindow` beside it (a second Chromium with its own throw-away profile,
served from a loopback server whose every path starts with a secret token).
"""

from __future__ import annotations

import html
import json
import threading
import time
from http import HTTPStatus
from importlib.resources import files
from pathlib import Path
from string import Template
from typing import Literal

from pydantic import Field, ValidationError

from susbench.core.models import Frozen
from susbench.people.appwindow import NO_FLAG_BAR, PageResponse, WindowedPages, WindowPlacement

__all__ = ["NO_FLAG_BAR", "ControlPanel", "Finish", "WindowPlacement", "control_page"]

PAGE = Template(files("susbench.people").joinpath("control.html").read_text(encoding="utf-8"))


class Finish(Frozen):
    """How the person ended the task, and after how many seconds."""

    how: Literal["done", "give_up"]
    elapsed_s: float = Field(ge=0)


class _Request(Frozen):
    how: Literal["done", "give_up"]


def control_page(instruction: str, seconds_left: float) -> str:
    """The controls' HTML: the instruction, a countdown, Done and Give up (window title: `Task: ...`)."""
    return PAGE.substitute(instruction=html.escape(instruction), seconds=f"{seconds_left:.0f}")


class ControlPanel(WindowedPages):
    """One episode's controls: a loopback server and the window showing them; `wait` for the person."""

    def __init__(
        self, instruction: str, seconds: float, placement: WindowPlacement, executable: Path | None = None
    ) -> None:
        self.instruction = instruction
        self.seconds = seconds
        self._finished = threading.Event()
        self._finish: Finish | None = None
        self._started = time.monotonic()
        super().__init__(placement, executable)

    def wait(self, timeout: float) -> Finish | None:
        """The person's Done or Give up, or None when `timeout` seconds pass first."""
        self._finished.wait(max(timeout, 0.0))
        return self._finish

    def get(self, name: str) -> PageResponse | None:
        if name:
            return None
        left = max(0.0, self.seconds - (time.monotonic() - self._started))
        return PageResponse(
            HTTPStatus.OK, control_page(self.instruction, left).encode(), "text/html; charset=utf-8"
        )

    def post(self, name: str, body: bytes) -> PageResponse | None:
        if name != "finish":
            return None
        try:
            request = _Request.model_validate(json.loads(body))
        except (ValueError, ValidationError):
            return PageResponse(HTTPStatus.BAD_REQUEST, b'expected {"how": "done" | "give_up"}')
        if not self._finished.is_set():
            self._finish = Finish(how=request.how, elapsed_s=round(time.monotonic() - self._started, 3))
            self._finished.set()
        return PageResponse(HTTPStatus.NO_CONTENT)
