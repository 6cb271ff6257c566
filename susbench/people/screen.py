"""A virtual X screen (Xvfb) for people who are not at this machine, and for tests."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from susbench.core.errors import SusbenchError
from susbench.core.models import Frozen

APT_PACKAGES = ("xvfb", "xdotool", "x11vnc", "novnc", "websockify")


def dying_with_parent(command: Sequence[str]) -> list[str]:
    """`command`, run so that it gets SIGTERM when this process dies, even by SIGKILL, so no screen,
    VNC server or window outlives the run that started it.

    util-linux's `setpriv` sets the signal and then executes the command. Setting it from Python in
    the child instead (`Popen(preexec_fn=...)`) runs Python between fork and exec, which Python's
    documentation warns can deadlock when other threads run: a child that never starts its program.
    """
    return [require_tool("setpriv", "util-linux"), "--pdeathsig", "TERM", "--", *command]


class ScreenSize(Frozen):
    width: int = 1680
    height: int = 1050


def require_tool(name: str, *packages: str) -> str:
    """The path of a tool, or a clear error naming the Debian packages to install (the X tools')."""
    found = shutil.which(name)
    if found is None:
        wanted = " ".join(packages or APT_PACKAGES)
        raise SusbenchError(f"{name} is not installed; expected: apt-get install -y {wanted}")
    return found


class VirtualScreen:
    """Xvfb on the first free display number (it picks one itself and tells us through a pipe).

    With `framebuffer`, Xvfb keeps the screen's pixels in `framebuffer`/Xvfb_screen0 (XWD format),
    where whoever watches the screen reads them without a connection to the display.
    """

    def __init__(self, size: ScreenSize | None = None, framebuffer: Path | None = None) -> None:
        self.size = size or ScreenSize()
        self.framebuffer = framebuffer
        self._process: subprocess.Popen[bytes] | None = None
        self.display = ""

    def __enter__(self) -> VirtualScreen:
        read_end, write_end = os.pipe()
        command = [
            require_tool("Xvfb"),
            "-displayfd",
            str(write_end),
            "-screen",
            "0",
            f"{self.size.width}x{self.size.height}x24",
            "-nolisten",
            "tcp",
            *(["-fbdir", str(self.framebuffer)] if self.framebuffer else []),
        ]
        self._process = subprocess.Popen(
            dying_with_parent(command), pass_fds=(write_end,), stderr=subprocess.DEVNULL
        )
        os.close(write_end)
        with os.fdopen(read_end) as announced:
            number = announced.readline().strip()
        if not number:
            self.__exit__()
            raise SusbenchError("Xvfb did not start: it announced no display number")
        self.display = f":{number}"
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.wait(timeout=10)
            self._process = None


@contextmanager
def using_display(display: str) -> Iterator[None]:
    """`display` as this process's `DISPLAY` (inherited by the browsers and workers it starts) while
    the block runs; the previous value afterwards."""
    before = os.environ.get("DISPLAY")
    os.environ["DISPLAY"] = display
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("DISPLAY", None)
        else:
            os.environ["DISPLAY"] = before
