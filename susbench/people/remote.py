"""A remote seat: the person's screen is a virtual one here, and they see and drive it from their own
browser through noVNC, behind a secret token in their link.

    participant's browser ──► TokenGate (host:port, the only public socket; /<token>/... or 403)
        ──► websockify (127.0.0.1, random port; serves noVNC, WebSocket only with a second token)
        ──► x11vnc (a unix socket in a 0700 folder; no TCP at all) ──► Xvfb (no TCP)

x11vnc injects the person's mouse and keyboard with XTEST, so Chromium sees trusted input.

The link opens the seat's own page (`seat.html`, Debian's noVNC core drawing the screen). When the
session ends (the last Done, the debrief, a refusal, a stop) the gate tells that page, which shows
"Thank you — you can close this window" instead of reconnecting, and only then does the seat close.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import ipaddress
import json
import os
import secrets
import shutil
import socket
import struct
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from importlib.resources import files
from pathlib import Path

from pydantic import Field
from rich.console import Console

from susbench.browser import free_port
from susbench.core.errors import SusbenchError
from susbench.core.models import Frozen
from susbench.operators import is_seated
from susbench.people.screen import (
    APT_PACKAGES,
    ScreenSize,
    VirtualScreen,
    dying_with_parent,
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
SEAT_PAGE = files("susbench.people").joinpath("seat.html").read_bytes()
SESSION_POLL_S = 20.0
"""How long the seat page's question "has the session ended?" is held open before it is answered no."""
END_GRACE_S = 5.0
"""How long an ending seat waits for the participant's page to take in the end (it then disconnects)."""
END_MESSAGE = "The session has ended."
WILDCARDS = ("0.0.0.0", "", "::")
SIOCGIFADDR = 0x8915
OFF_MACHINE_NOTE = (
    "the link is the key to the participant's screen and travels unencrypted: off this machine send "
    "it only through TLS (a reverse proxy with https in front of the port) or an SSH tunnel "
    "(ssh -N -L {port}:127.0.0.1:{port} this-machine, then the link with 127.0.0.1)"
)


def _answer(body: bytes, kind: str) -> bytes:
    head = (
        f"HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nCache-Control: no-store\r\n"
        f"Referrer-Policy: no-referrer\r\nConnection: close\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


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
    so every request on a connection is checked. The gate itself answers two paths: "" (the seat
    page) and "session" (held open until the session ends, or `SESSION_POLL_S`).
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
        self._viewers: set[asyncio.StreamWriter] = set()
        self._ended = asyncio.Event()
        self._no_viewers = asyncio.Event()
        self._no_viewers.set()
        self._end_message = END_MESSAGE

    @property
    def port(self) -> int:
        return int(self._socket.getsockname()[1])

    def __enter__(self) -> TokenGate:
        self._thread.start()
        start = asyncio.start_server(self._accept, sock=self._socket, limit=HEAD_LIMIT)
        self._server = asyncio.run_coroutine_threadsafe(start, self._loop).result(START_TIMEOUT_S)
        return self

    def end(self, message: str = END_MESSAGE, grace_s: float = END_GRACE_S) -> None:
        """Tell the participant's page the session is over; wait until it disconnects (or `grace_s`)."""
        asyncio.run_coroutine_threadsafe(self._end(message, grace_s), self._loop).result(grace_s + 5)

    async def _end(self, message: str, grace_s: float) -> None:
        self._end_message = message
        self._ended.set()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._no_viewers.wait(), grace_s)

    def __exit__(self, *exc_info: object) -> None:
        asyncio.run_coroutine_threadsafe(self._close(), self._loop).result(START_TIMEOUT_S)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(START_TIMEOUT_S)
        self._loop.close()

    async def _close(self) -> None:
        """Stop listening and end every relay by closing its sockets (cancelling the tasks that
        asyncio's server started makes it log their cancellation)."""
        self._ended.set()
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
        name = forwarded.split(b" ", 2)[1].decode("latin-1").partition("?")[0]
        if name in ("/", "/session"):
            writer.write(await self._local(name))
            await writer.drain()
            return
        upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", self._upstream_port)
        self._open.add(upstream_writer)
        viewer = name == "/websockify"
        if viewer:
            self._viewers.add(writer)
            self._no_viewers.clear()
        try:
            upstream_writer.write(forwarded)
            await asyncio.gather(_pipe(reader, upstream_writer), _pipe(upstream_reader, writer))
        finally:
            self._open.discard(upstream_writer)
            upstream_writer.close()
            if viewer:
                self._viewers.discard(writer)
                if not self._viewers:
                    self._no_viewers.set()

    async def _local(self, name: str) -> bytes:
        """The gate's own answers: the seat page, and whether the session has ended."""
        if name == "/":
            return _answer(SEAT_PAGE, "text/html; charset=utf-8")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._ended.wait(), SESSION_POLL_S)
        state = {"ended": self._ended.is_set(), "message": self._end_message if self._ended.is_set() else ""}
        return _answer(json.dumps(state).encode(), "application/json")

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
    if not (NOVNC_ROOT / "core" / "rfb.js").is_file():
        raise SusbenchError(
            f"noVNC is not installed ({NOVNC_ROOT}/core/rfb.js is missing); "
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
    def links(self) -> list[str]:
        """The participant's link on every address the gate listens on (a wildcard host: each
        interface's address, this machine's own network first)."""
        return [
            f"http://{f'[{address}]' if ':' in address else address}:{self.port}/{self.token}/"
            for address in listening_addresses(self.options.host)
        ]

    @property
    def link(self) -> str:
        return self.links[0]

    def end(self, message: str = END_MESSAGE) -> None:
        """Show the participant the end screen (their page, not the seat's screen), before closing."""
        if self._gate is not None:
            self._gate.end(message)

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
            process = subprocess.Popen(dying_with_parent(command), stdout=output, stderr=subprocess.STDOUT)
        self._processes.append(process)
        return process

    def __exit__(self, *exc_info: object) -> None:
        if self._gate is not None:
            self._gate.end()
            self._gate.__exit__()
            self._gate = None
        for process in reversed(self._processes):
            _stop(process)
        self._processes.clear()
        self.screen.__exit__()
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None


def listening_addresses(host: str) -> list[str]:
    """The addresses a socket bound to `host` answers on: `host` itself, or for a wildcard every
    interface's (IPv4 for 0.0.0.0; IPv6 for ::, which listens on IPv6 alone), loopback last."""
    if host not in WILDCARDS:
        return [host]
    found = _ipv6_addresses() if host == "::" else _ipv4_addresses()
    return sorted(found, key=lambda address: ipaddress.ip_address(address).is_loopback)


def _ipv4_addresses() -> list[str]:
    found = []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        for _, name in socket.if_nameindex():
            with contextlib.suppress(OSError):  # an interface without an IPv4 address
                asked = struct.pack("256s", name.encode()[:15])
                found.append(socket.inet_ntoa(fcntl.ioctl(probe.fileno(), SIOCGIFADDR, asked)[20:24]))
    return found


def _ipv6_addresses() -> list[str]:
    """Global and loopback IPv6 addresses (link-local ones need a zone a link cannot carry)."""
    with contextlib.suppress(OSError), open("/proc/net/if_inet6", encoding="ascii") as table:
        addresses = [ipaddress.IPv6Address(bytes.fromhex(line.split()[0])) for line in table]
        return [str(address) for address in addresses if not address.is_link_local]
    return ["::1"]


def seat_notice(seat: RemoteSeat) -> str:
    """What the researcher is told once the seat is open: each link, then how to send it safely."""
    lines = [f"participant's link: {link}" for link in seat.links]
    return "\n".join([*lines, OFF_MACHINE_NOTE.format(port=seat.port)])


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
    """With --serve, this process's display is a remote seat; `check` runs on it, then its links
    (one per address it listens on) are printed once, with how to send them off this machine."""
    if not serve:
        if port is not None or host is not None:
            raise SusbenchError("--port and --host belong to --serve; expected --serve with them")
        yield
        return
    seat = SeatOptions(host=host or SeatOptions().host, port=SeatOptions().port if port is None else port)
    with serving_display(seat) as opened:
        check()
        console.print(seat_notice(opened), soft_wrap=True, markup=False, highlight=False)
        yield


@contextlib.contextmanager
def remote_screen(
    serve: bool,
    port: int | None,
    host: str | None,
    backend: str,
    operator: str,
    console: Console,
) -> Iterator[None]:
    """A run's --serve: only for a person at the screen, on this machine."""
    if serve and backend != "local":
        raise SusbenchError("--serve needs --backend local: the participant's screen is on this machine")

    def seated() -> None:
        if not is_seated(operator):
            raise SusbenchError(
                f"--serve: operator {operator!r} has no person at the screen; expected --operator human"
            )

    with served_display(serve, port, host, console, seated):
        yield
