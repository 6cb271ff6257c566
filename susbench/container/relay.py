"""Byte relays between a TCP port and a unix socket: the only way into an airgapped container.

The container has no network, so Chromium's DevTools port lives on the container's own loopback.
Inside, a relay listens on a unix socket in a mounted folder and pipes each connection to that
port; on the host, another relay listens on a loopback TCP port and pipes to the socket, so
Playwright's `connect_over_cdp("http://127.0.0.1:PORT")` works unchanged. Chromium builds the
WebSocket URL it hands out from the request's Host header, so the host's port survives the trip.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from susbench.core.errors import SusbenchError

CHUNK = 256 * 1024
Opener = Callable[[], Awaitable[tuple[asyncio.StreamReader, asyncio.StreamWriter]]]
Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Coroutine[Any, Any, None]]


class IoLoop:
    """One asyncio loop on a daemon thread, for relays and small servers beside sync code."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self._thread.start()

    def call(self, coroutine: Coroutine[Any, Any, Any], timeout: float = 30.0) -> Any:
        """Run `coroutine` on the loop and wait for its result."""
        future: Future[Any] = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        return future.result(timeout)

    def close(self) -> None:
        """Cancel what still runs (open relays), then stop the loop and its thread."""
        if self.loop.is_closed():
            return
        self.call(_cancel_others())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        self.loop.close()


async def _cancel_others() -> None:
    others = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
    for task in others:
        task.cancel()
    await asyncio.gather(*others, return_exceptions=True)


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(CHUNK):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()


def piping(open_target: Opener) -> Handler:
    """A connection handler that pipes both ways to a fresh connection from `open_target`."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            target_reader, target_writer = await open_target()
        except OSError:
            writer.close()
            return
        with contextlib.suppress(asyncio.CancelledError):  # shutting down: end quietly
            await asyncio.gather(_pump(reader, target_writer), _pump(target_reader, writer))

    return handle


async def serve_unix(path: Path, handler: Handler, mode: int = 0o666) -> asyncio.Server:
    """A unix-socket server at `path` (replacing a stale socket), reachable by the host's user.

    It is made under another name and renamed when it listens: the host waits for `path` to exist,
    and a socket file that exists before `listen` refuses connections.
    """
    making = path.with_name(f".{path.name}.new")
    making.unlink(missing_ok=True)
    server = await asyncio.start_unix_server(handler, path=str(making))
    os.chmod(making, mode)
    os.replace(making, path)
    return server


class TcpToUnixRelay:
    """Host side: 127.0.0.1:`port` (free, chosen on start) piped to a unix socket."""

    def __init__(self, socket_path: Path) -> None:
        self.socket_path = socket_path
        self.port = 0
        self._io: IoLoop | None = None
        self._server: asyncio.Server | None = None

    def __enter__(self) -> TcpToUnixRelay:
        self._io = IoLoop("susbench-cdp-relay")
        handler = piping(lambda: asyncio.open_unix_connection(str(self.socket_path)))
        try:
            self._server = self._io.call(asyncio.start_server(handler, "127.0.0.1", 0))
        except OSError as exc:
            self._io.close()
            raise SusbenchError(f"cannot listen on a loopback port for {self.socket_path}: {exc}") from None
        self.port = int(self._server.sockets[0].getsockname()[1])
        return self

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __exit__(self, *exc_info: object) -> None:
        if self._io is None:
            return
        if self._server is not None:
            self._server.close()
        self._io.close()
        self._io = None
