"""A remote seat: the person's screen is a virtual one here, and they see and drive it from their own
browser through noVNC, behind a secret token in their link.

    participant's browser ──► TokenGate (host:port, the only public socket; /<token>/... or 403)
        ──► websockify (127.0.0.1, random port; serves noVNC, WebSocket only with a second token)
        ──► x11vnc (a unix socket in a 0700 folder; no TCP at all) ──► Xvfb (no TCP)

x11vnc injects the person's mouse and keyboard with XTEST, so Chromium sees trusted input.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import quote

from pydantic import Field
from rich.console import Console

from susbench.browser import free_port
from susbench.core.errors import SusbenchError
from susbench.core.models import Frozen
from susbench.operators import OperatorSettings, Seated, make_operator
from susbench.people.screen import (
    APT_PACKAGES,
    ScreenSize,
    VirtualScreen,
    die_with_parent,
    require_tool,
    using_display,
)

NOVNC_ROOT = Path("/usr/share/novnc")
START_TIMEOUT_S = 15.0
HEAD_TIMEOUT_S = 10.0
HEAD_LIMIT = 16 * 1024
REFUSAL = b"this link is not valid here\n"
FORBIDDEN = (
    b"HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nCache-Control: no-store\r\n"
    b"Connection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(REFUSAL), REFUSAL)
)
VIEWER = "vnc.html?autoconnect=true&reconnect=true&resize=scale&quality=9&path={path}"
"""noVNC's full viewer, connecting at once, scaled to the participant's window, at its best picture."""


class SeatOptions(Frozen):
    """Where the participant's link points, and the size of the screen they see."""

    host: str = "127.0.0.1"
    port: int = Field(default=6080, ge=0, le=65535)
    size: ScreenSize = ScreenSize()
    poll_ms: int = Field(default=5, ge=1, le=100)
    """x11vnc's pause between screen polls and before sending an update (its -wait and -defer; its own
    default is 20 ms, with longer naps when idle, which we turn off: a participant reads, then acts).
    5 ms: 0.6x the default's median latency for 3% of a core (benchmarks/people_remote_latency.py)."""


def _stop(process: subprocess.Popen[bytes] | None) -> None:
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _listen(host: str, port: int) -> socket.socket:
    try:
        return socket.create_server((host, port))
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise SusbenchError(
                f"--port {port}: already in use on {host}; expected a free port (or --port 0 for any)"
            ) from None
        raise SusbenchError(
            f"--host {host}: cannot listen there ({exc.strerror or exc}); "
            "expected an address of this machine, e.g. 127.0.0.1 or 0.0.0.0"
        ) from None


class TokenGate:
    """The public socket: a request goes on to websockify only when its path starts with /<token>/.

    The prefix is stripped; the WebSocket path gets websockify's own token instead, so the link's
    token never travels further and websockify's port is useless without the inner one. Anything else
    gets 403 before a byte reaches websockify. Static requests are sent on with `Connection: close`,
    so every request on a connection is checked.
    """

    def __init__(self, listening: socket.socket, token: str, upstream_port: int, upstream_token: str) -> None:
        self._socket = listening
        self.token = token
        self._upstream_port = upstream_port
        self._upstream_token = upstream_token
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True, name="token-gate")
        self._server: asyncio.Server | None = None
        self._open: set[asyncio.StreamWriter] = set()
        self._relays: set[asyncio.Task[None]] = set()

    @property
    def port(self) -> int:
        return int(self._socket.getsockname()[1])

    def __enter__(self) -> TokenGate:
        self._thread.start()
        start = asyncio.start_server(self._accept, sock=self._socket, limit=HEAD_LIMIT)
        self._server = asyncio.run_coroutine_threadsafe(start, self._loop).result(START_TIMEOUT_S)
        return self

    def __exit__(self, *exc_info: object) -> None:
        asyncio.run_coroutine_threadsafe(self._close(), self._loop).result(START_TIMEOUT_S)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(START_TIMEOUT_S)
        self._loop.close()

    async def _close(self) -> None:
        """Stop listening and end every relay by closing its sockets (cancelling the tasks that
        asyncio's server started makes it log their cancellation)."""
        if self._server is not None:
            self._server.close()
        for writer in self._open:
            writer.close()
        if self._relays:
            await asyncio.wait(self._relays, timeout=START_TIMEOUT_S)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._relays.add(task)
        self._open.add(writer)
        try:
            await self._relay(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError):
            pass
        finally:
            self._relays.discard(task)
            self._open.discard(writer)
            writer.close()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEAD_TIMEOUT_S)
        forwarded = self.rewrite(head)
        if forwarded is None:
            writer.write(FORBIDDEN)
            await writer.drain()
            return
        upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", self._upstream_port)
        self._open.add(upstream_writer)
        try:
            upstream_writer.write(forwarded)
            await asyncio.gather(_pipe(reader, upstream_writer), _pipe(upstream_reader, writer))
        finally:
            self._open.discard(upstream_writer)
            upstream_writer.close()

    def rewrite(self, head: bytes) -> bytes | None:
        """The request head as websockify gets it, or None when the path does not carry the token."""
        request_line, *headers = head.decode("latin-1").removesuffix("\r\n\r\n").split("\r\n")
        parts = request_line.split(" ")
        if len(parts) != 3 or not parts[1].startswith("/"):
            return None
        method, target, version = parts
        given, slash, rest = target[1:].partition("/")
        if not slash or not secrets.compare_digest(given.encode(), self.token.encode()):
            return None
        if rest.partition("?")[0] == "websockify":
            rest = f"websockify?token={self._upstream_token}"
        else:
            headers = [line for line in headers if not line.lower().startswith("connection:")]
            headers.append("Connection: close")
        return "\r\n".join([f"{method} /{rest} {version}", *headers, "", ""]).encode("latin-1")


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except ConnectionError:
        pass
    finally:
        writer.close()


def _wait_until(ready: Callable[[], bool], process: subprocess.Popen[bytes], what: str, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while not ready():
        if process.poll() is not None or time.monotonic() > deadline:
            said = log.read_text(errors="replace").strip().splitlines()[-3:]
            raise SusbenchError(f"{what} did not start: {' | '.join(said) or 'it said nothing'}")
        time.sleep(0.05)


def _accepts(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
        return True
    return False


def require_novnc() -> None:
    if not (NOVNC_ROOT / "vnc.html").is_file():
        raise SusbenchError(
            f"noVNC is not installed ({NOVNC_ROOT}/vnc.html is missing); "
            f"expected: apt-get install -y {' '.join(APT_PACKAGES)}"
        )


class RemoteSeat:
    """Xvfb, x11vnc on it, websockify with Debian's noVNC, and the token gate; `link` for the person."""

    def __init__(self, options: SeatOptions | None = None) -> None:
        self.options = options or SeatOptions()
        self.token = secrets.token_urlsafe(24)
        self.screen = VirtualScreen(self.options.size)
        self._folder: Path | None = None
        self._processes: list[subprocess.Popen[bytes]] = []
        self._gate: TokenGate | None = None

    @property
    def display(self) -> str:
        return self.screen.display

    @property
    def port(self) -> int:
        assert self._gate is not None, "the seat is not open"
        return self._gate.port

    @property
    def link(self) -> str:
        """The participant's link (with a wildcard host, this machine's name stands in for it)."""
        host = self.options.host
        if host in ("0.0.0.0", "::", ""):
            host = socket.getfqdn()
        shown = f"[{host}]" if ":" in host else host
        path = quote(f"{self.token}/websockify", safe="")
        return f"http://{shown}:{self.port}/{self.token}/" + VIEWER.format(path=path)

    def __enter__(self) -> RemoteSeat:
        x11vnc, websockify = require_tool("x11vnc"), require_tool("websockify")
        require_tool("Xvfb")
        require_novnc()
        listening = _listen(self.options.host, self.options.port)
        try:
            self._open(listening, x11vnc, websockify)
        except BaseException:
            listening.close()
            self.__exit__()
            raise
        return self

    def _open(self, listening: socket.socket, x11vnc: str, websockify: str) -> None:
        self._folder = Path(tempfile.mkdtemp(prefix="susbench-seat-"))
        os.chmod(self._folder, 0o700)
        self.screen.__enter__()
        vnc_socket = self._folder / "vnc.sock"
        log = self._folder / "x11vnc.log"
        # No TCP socket at all (each flag closes one; -localhost would also turn away the unix socket's
        # clients, whom x11vnc names "localhost").
        vnc = self._start(
            [x11vnc, "-display", self.display, "-unixsock", str(vnc_socket), "-rfbport", "0",
             "-rfbportv6", "-1", "-noipv6", "-listen", "localhost", "-forever", "-shared", "-nopw",
             "-quiet", "-nonap", "-wait", str(self.options.poll_ms), "-defer", str(self.options.poll_ms)],
            log,
        )  # fmt: skip
        _wait_until(vnc_socket.exists, vnc, "x11vnc", log)
        inner_token = secrets.token_urlsafe(24)
        tokens = self._folder / "tokens"
        tokens.write_text(f"{inner_token}: unix_socket:{vnc_socket}\n")
        port = free_port()
        log = self._folder / "websockify.log"
        proxy = self._start(
            [websockify, "--web", str(NOVNC_ROOT), "--token-plugin", "TokenFile", "--token-source",
             str(tokens), f"127.0.0.1:{port}"],
            log,
        )  # fmt: skip
        _wait_until(lambda: _accepts(port), proxy, "websockify", log)
        self._gate = TokenGate(listening, self.token, port, inner_token).__enter__()

    def _start(self, command: list[str], log: Path) -> subprocess.Popen[bytes]:
        with log.open("wb") as output:
            process = subprocess.Popen(
                command, stdout=output, stderr=subprocess.STDOUT, preexec_fn=die_with_parent
            )
        self._processes.append(process)
        return process

    def __exit__(self, *exc_info: object) -> None:
        if self._gate is not None:
            self._gate.__exit__()
            self._gate = None
        for process in reversed(self._processes):
            _stop(process)
        self._processes.clear()
        self.screen.__exit__()
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None


@contextlib.contextmanager
def serving_display(options: SeatOptions) -> Iterator[RemoteSeat]:
    """A remote seat whose display is this process's `DISPLAY` (and its children's) while it lasts."""
    with RemoteSeat(options) as seat, using_display(seat.display):
        yield seat


@contextlib.contextmanager
def served_display(
    serve: bool,
    port: int | None,
    host: str | None,
    console: Console,
    check: Callable[[], None] = lambda: None,
) -> Iterator[None]:
    """With --serve, this process's display is a remote seat; `check` runs on it, then its link is
    printed once."""
    if not serve:
        if port is not None or host is not None:
            raise SusbenchError("--port and --host belong to --serve; expected --serve with them")
        yield
        return
    seat = SeatOptions(host=host or SeatOptions().host, port=SeatOptions().port if port is None else port)
    with serving_display(seat) as opened:
        check()
        console.print(f"participant's link: {opened.link}", soft_wrap=True, markup=False, highlight=False)
        yield


@contextlib.contextmanager
def remote_screen(
    serve: bool,
    port: int | None,
    host: str | None,
    backend: str,
    operator: str,
    settings: OperatorSettings,
    console: Console,
) -> Iterator[None]:
    """A run's --serve: only for a person at the screen, on this machine."""
    if serve and backend != "local":
        raise SusbenchError("--serve needs --backend local: the participant's screen is on this machine")

    def seated() -> None:
        if not isinstance(make_operator(operator, 0, settings), Seated):
            raise SusbenchError(
                f"--serve: operator {operator!r} has no person at the screen; expected --operator human"
            )

    with served_display(serve, port, host, console, seated):
        yield
