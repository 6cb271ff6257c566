"""Direct replay, the Web Page Replay way: Chromium resolves every host to this server.

No proxy protocol and no upstream code at all (so it is offline by construction): Chromium is
started with `--host-resolver-rules="MAP * 127.0.0.1:<port>, EXCLUDE localhost"` and the replay
CA's leaf key pinned, and connects here as if to each origin. One port serves HTTP and HTTPS (the
first byte 0x16 is a TLS ClientHello, as in the local web); TLS leaves come from `ReplayCA` by
SNI. The HTTP/1.1 side is a small parser (keep-alive, pipelined requests answered in order), the
replies come from the same `Responder` the proxy uses.

Each connection is driven straight from the event loop's readiness callbacks, its TLS by an
`ssl.SSLSocket` that reads and writes the socket itself. asyncio's own SSL transport pushes every
byte through memory BIOs and a dozen Python calls per read and write; profiled under Chromium page
loads (issue 48), half of this server's CPU was the interpreter, and a page load opens six TLS
connections at once, which this one thread handshakes in turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
from pathlib import Path

from susbench.replayer.matching import RuleSet
from susbench.replayer.service import Responder, ThreadedReplayServer
from susbench.replayer.tls import ReplayCA

MAX_HEAD_BYTES = 64 * 1024
MAX_BODY_BYTES = 64 * 1024 * 1024
INLINE_BODY_BYTES = 64 * 1024
HANDSHAKE_TIMEOUT_S = 10.0
BACKLOG = 1024
ACCEPTS_PER_WAKEUP = 64
READ_BYTES = 256 * 1024
TLS_FIRST_BYTE = b"\x16"
WOULD_BLOCK = (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError)


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


class HttpReplayProtocol:
    """One client connection's HTTP/1.1: parse requests as they arrive and answer each in order."""

    def __init__(self, responder: Responder, scheme: str, transport: _Connection) -> None:
        self.responder = responder
        self.scheme = scheme
        self.buffer = bytearray()
        self.pending: _Pending | None = None
        self.transport = transport
        self.closing = False

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while not self.closing and self._next():
            pass

    def _fail(self, response: bytes) -> bool:
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
            self.transport.write(CONTINUE)
        return _Pending(method, url, length, close)

    def _refuse(self, response: bytes) -> None:
        self._fail(response)

    def _answer(self, pending: _Pending, body: bytes) -> None:
        transport = self.transport
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


class _Connection:
    """One accepted socket: sniff TLS by its first byte, handshake, then feed HTTP/1.1 both ways.

    Reads stop while replies wait to be sent (a slow reader cannot make the server buffer without
    bound); `close` sends what is buffered first, `abort` does not.
    """

    __slots__ = ("closed", "closing", "fd", "loop", "out", "protocol", "server", "sock", "timer", "tls")

    def __init__(
        self, server: DirectReplayServer, loop: asyncio.AbstractEventLoop, sock: socket.socket
    ) -> None:
        self.server = server
        self.loop = loop
        self.sock: socket.socket = sock
        self.fd = sock.fileno()
        self.out = bytearray()
        self.protocol: HttpReplayProtocol | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.tls = False
        self.closing = False
        self.closed = False
        loop.add_reader(self.fd, self._sniff)

    def _sniff(self) -> None:
        try:
            first = self.sock.recv(1, socket.MSG_PEEK)
        except BlockingIOError:
            return
        except OSError:
            first = b""
        if not first:
            self.abort()
        elif first == TLS_FIRST_BYTE:
            self.tls = True
            self.sock = self.server.ca.context.wrap_socket(
                self.sock, server_side=True, do_handshake_on_connect=False
            )
            self.timer = self.loop.call_later(HANDSHAKE_TIMEOUT_S, self.abort)
            self.loop.add_reader(self.fd, self._handshake)
            self._handshake()
        else:
            self._start("http")

    def _handshake(self) -> None:
        assert isinstance(self.sock, ssl.SSLSocket)
        try:
            self.sock.do_handshake()
        except ssl.SSLWantReadError:
            self.loop.remove_writer(self.fd)
            return
        except ssl.SSLWantWriteError:
            self.loop.add_writer(self.fd, self._handshake)
            return
        except OSError:  # ssl.SSLError included: a client that does not trust us, or hung up
            self.abort()
            return
        self.loop.remove_writer(self.fd)
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        self._start("https")

    def _start(self, scheme: str) -> None:
        self.protocol = HttpReplayProtocol(self.server._require(), scheme, self)
        self.loop.add_reader(self.fd, self._read)
        self._read()

    def _read(self) -> None:
        protocol = self.protocol
        assert protocol is not None
        sock = self.sock
        while not self.closed and not self.closing and not self.out:
            try:
                data = sock.recv(READ_BYTES)
            except WOULD_BLOCK:
                return
            except OSError:
                self.abort()
                return
            if not data:
                self.close()
                return
            protocol.data_received(data)
            if len(data) < READ_BYTES and not (self.tls and sock.pending()):  # type: ignore[attr-defined]
                return

    def write(self, data: bytes) -> None:
        if self.closed:
            return
        if self.out:
            self.out += data
            return
        view = memoryview(data)
        while view:
            try:
                sent = self.sock.send(view)
            except WOULD_BLOCK:
                break
            except OSError:
                self.abort()
                return
            view = view[sent:]
        if view:
            self.out += view
            self.loop.remove_reader(self.fd)
            self.loop.add_writer(self.fd, self._flush)

    def _flush(self) -> None:
        while self.out:
            try:
                sent = self.sock.send(self.out)
            except WOULD_BLOCK:
                return
            except OSError:
                self.abort()
                return
            del self.out[:sent]
        self.loop.remove_writer(self.fd)
        if self.closing:
            self.abort()
        else:
            self.loop.add_reader(self.fd, self._read)
            self._read()

    def close(self) -> None:
        """Hang up once every byte written so far is sent."""
        self.closing = True
        if not self.out:
            self.abort()

    def abort(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self.timer is not None:
            self.timer.cancel()
        self.loop.remove_reader(self.fd)
        self.loop.remove_writer(self.fd)
        self.sock.close()
        self.server._connections.discard(self)


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
        self._connections: set[_Connection] = set()

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
        loop.add_reader(listener, self._accept, loop, listener)
        self._listening()
        try:
            await self._stopping.wait()
        finally:
            loop.remove_reader(listener)
            listener.close()
            for connection in list(self._connections):
                connection.abort()

    def _accept(self, loop: asyncio.AbstractEventLoop, listener: socket.socket) -> None:
        for _ in range(ACCEPTS_PER_WAKEUP):
            try:
                client, _ = listener.accept()
            except OSError:  # BlockingIOError: none left; others (EMFILE, ECONNABORTED): next wakeup
                return
            client.setblocking(False)
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._connections.add(_Connection(self, loop, client))

    def _stop(self, loop: asyncio.AbstractEventLoop) -> None:
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(self._stopping.set)


def _quiet(loop: asyncio.AbstractEventLoop, context: dict[str, object]) -> None:
    """Browsers hang up mid-handshake or mid-response all the time; only report real bugs."""
    if isinstance(context.get("exception"), OSError):
        return
    loop.default_exception_handler(context)
