"""Direct replay, the Web Page Replay way: Chromium resolves every host to this server.

No proxy protocol and no upstream code at all (so it is offline by construction): Chromium is
started with `--host-resolver-rules="MAP * 127.0.0.1:<port>, EXCLUDE localhost"` and the replay
CA's leaf key pinned, and connects here as if to each origin. One port serves HTTP and HTTPS (the
first byte 0x16 is a TLS ClientHello, as in the local web); TLS leaves come from `ReplayCA` by
SNI. The HTTP/1.1 side is a small `asyncio.Protocol` (keep-alive, pipelined requests answered in
order), the replies come from the same `Responder` the proxy uses.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from pathlib import Path

from susbench.replayer.matching import RuleSet
from susbench.replayer.service import Responder, ThreadedReplayServer
from susbench.replayer.tls import ReplayCA

MAX_HEAD_BYTES = 64 * 1024
MAX_BODY_BYTES = 64 * 1024 * 1024
INLINE_BODY_BYTES = 64 * 1024
HANDSHAKE_TIMEOUT_S = 10.0
BACKLOG = 1024
TLS_FIRST_BYTE = b"\x16"


def _status(code: int, reason: str) -> bytes:
    return f"HTTP/1.1 {code} {reason}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".encode()


BAD_REQUEST = _status(400, "Bad Request")
TOO_LARGE = _status(413, "Content Too Large")
LENGTH_REQUIRED = _status(411, "Length Required")
NOT_ALLOWED = _status(405, "Method Not Allowed")
CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"
CLOSE_LINE = b"Connection: close\r\n"


class _Pending:
    """A request whose head is parsed and whose body is still arriving."""

    __slots__ = ("close", "length", "method", "url")

    def __init__(self, method: str, url: str, length: int, close: bool) -> None:
        self.method = method
        self.url = url
        self.length = length
        self.close = close


class HttpReplayProtocol(asyncio.Protocol):
    """One client connection: parse HTTP/1.1 requests as they arrive and answer each in order."""

    def __init__(self, responder: Responder, scheme: str, connections: set[asyncio.Transport]) -> None:
        self.responder = responder
        self.scheme = scheme
        self.connections = connections
        self.buffer = bytearray()
        self.pending: _Pending | None = None
        self.transport: asyncio.Transport | None = None
        self.closing = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.connections.add(transport)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.transport is not None:
            self.connections.discard(self.transport)

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while not self.closing and self._next():
            pass

    def _fail(self, response: bytes) -> bool:
        assert self.transport is not None
        self.transport.write(response)
        self.transport.close()
        self.closing = True
        return False

    def _next(self) -> bool:
        """Answer one complete request from the buffer; False when more bytes are needed."""
        if self.pending is None:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return len(self.buffer) > MAX_HEAD_BYTES and self._fail(BAD_REQUEST)
            head = bytes(self.buffer[:end])
            del self.buffer[: end + 4]
            pending = self._parse(head)
            if pending is None:
                return False
            self.pending = pending
        pending = self.pending
        if len(self.buffer) < pending.length:
            return False
        body = bytes(self.buffer[: pending.length])
        del self.buffer[: pending.length]
        self.pending = None
        self._answer(pending, body)
        return not self.closing

    def _parse(self, head: bytes) -> _Pending | None:
        lines = head.split(b"\r\n")
        parts = lines[0].split(b" ")
        if len(parts) != 3 or not parts[2].startswith(b"HTTP/1."):
            return self._refuse(BAD_REQUEST)
        method = parts[0].decode("ascii", "replace").upper()
        target = parts[1].decode("utf-8", "surrogateescape")
        host = ""
        length = 0
        close = parts[2] == b"HTTP/1.0"
        expect = False
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"host":
                host = value.strip().decode("latin-1").lower()
            elif name == b"content-length":
                if not value.strip().isdigit():
                    return self._refuse(BAD_REQUEST)
                length = int(value)
            elif name == b"transfer-encoding":
                return self._refuse(LENGTH_REQUIRED)
            elif name == b"connection":
                tokens = value.lower()
                close = b"close" in tokens or (close and b"keep-alive" not in tokens)
            elif name == b"expect":
                expect = value.strip().lower() == b"100-continue"
        if method == "CONNECT":
            return self._refuse(NOT_ALLOWED)
        if length > MAX_BODY_BYTES:
            return self._refuse(TOO_LARGE)
        if target.startswith(("http://", "https://")):
            url = target
        elif host and target.startswith("/"):
            url = f"{self.scheme}://{host}{target}"
        else:
            return self._refuse(BAD_REQUEST)
        if expect and length > len(self.buffer):
            assert self.transport is not None
            self.transport.write(CONTINUE)
        return _Pending(method, url, length, close)

    def _refuse(self, response: bytes) -> None:
        self._fail(response)

    def _answer(self, pending: _Pending, body: bytes) -> None:
        transport = self.transport
        assert transport is not None
        reply = self.responder.answer(pending.method, pending.url, body)
        assert reply is not None
        tail = CLOSE_LINE + b"\r\n" if pending.close else b"\r\n"
        payload = b"" if pending.method == "HEAD" else reply.body
        if len(payload) <= INLINE_BODY_BYTES:
            transport.write(reply.head + tail + payload)
        else:
            transport.write(reply.head + tail)
            transport.write(payload)
        if pending.close:
            transport.close()
            self.closing = True


class DirectReplayServer(ThreadedReplayServer):
    """The replayer as every origin at once, for a Chromium we launch (see `chromium_flags`)."""

    name = "direct replay server"
    proxy_url: str | None = None

    def __init__(
        self,
        snapshot_path: Path | str,
        port: int = 0,
        host: str = "127.0.0.1",
        deterministic: bool = True,
        rules: RuleSet | None = None,
        ca_dir: Path | None = None,
    ) -> None:
        super().__init__(snapshot_path, port, host, deterministic, rules)
        self.ca = ReplayCA(ca_dir)
        self._stopping = asyncio.Event()
        self._connections: set[asyncio.Transport] = set()

    @property
    def spki(self) -> str:
        return self.ca.spki

    @property
    def loopback(self) -> str:
        """The address Chromium should dial (a wildcard bind address is not dialable)."""
        return "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host

    @property
    def host_resolver_rules(self) -> str:
        return f"MAP * {self.loopback}:{self.port}, EXCLUDE localhost"

    def chromium_flags(self) -> list[str]:
        return [
            f"--host-resolver-rules={self.host_resolver_rules}",
            f"--ignore-certificate-errors-spki-list={self.spki}",
        ]

    async def _main(self) -> None:
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(_quiet)
        listener = socket.create_server((self.host, self._requested_port), backlog=BACKLOG)
        listener.setblocking(False)
        self.port = int(listener.getsockname()[1])
        tasks: set[asyncio.Task[None]] = set()
        accepting = asyncio.ensure_future(self._accept(loop, listener, tasks))
        self._listening()
        try:
            await self._stopping.wait()
        finally:
            accepting.cancel()
            listener.close()
            for task in list(tasks):
                task.cancel()
            for transport in list(self._connections):
                transport.abort()
            await asyncio.gather(accepting, *tasks, return_exceptions=True)

    async def _accept(
        self, loop: asyncio.AbstractEventLoop, listener: socket.socket, tasks: set[asyncio.Task[None]]
    ) -> None:
        while True:
            client, _ = await loop.sock_accept(listener)
            task = loop.create_task(self._connect(loop, client))
            tasks.add(task)
            task.add_done_callback(tasks.discard)

    async def _connect(self, loop: asyncio.AbstractEventLoop, client: socket.socket) -> None:
        """Wait for the first byte, peek at it, then hand the socket to the HTTP protocol."""
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        readable = loop.create_future()
        loop.add_reader(client, readable.set_result, None)
        try:
            await readable
            first = client.recv(1, socket.MSG_PEEK)
        except OSError:
            first = b""
        except asyncio.CancelledError:
            client.close()
            raise
        finally:
            loop.remove_reader(client)
        if not first:
            client.close()
            return
        tls = first == TLS_FIRST_BYTE
        responder = self._require()
        try:
            await loop.connect_accepted_socket(
                lambda: HttpReplayProtocol(responder, "https" if tls else "http", self._connections),
                client,
                ssl=self.ca.context if tls else None,
                ssl_handshake_timeout=HANDSHAKE_TIMEOUT_S if tls else None,
            )
        except OSError:  # ssl.SSLError and TimeoutError included
            client.close()

    def _stop(self, loop: asyncio.AbstractEventLoop) -> None:
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(self._stopping.set)


def _quiet(loop: asyncio.AbstractEventLoop, context: dict[str, object]) -> None:
    """Browsers hang up mid-handshake or mid-response all the time; only report real bugs."""
    if isinstance(context.get("exception"), OSError):
        return
    loop.default_exception_handler(context)
