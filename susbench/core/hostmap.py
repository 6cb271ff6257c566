"""A host map applied inside mitmproxy: `resolve` rules answer the proxy's name lookups.

Used by the recorder and by the replay proxy's live fallback, so both reach a host the same way.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from susbench.core.errors import SusbenchError
from susbench.core.loading import describe_validation_error
from susbench.core.models import HostMap

if TYPE_CHECKING:  # mitmproxy is imported where the addon runs: parse_host_map's users need none of it
    from mitmproxy.addonmanager import Loader
    from mitmproxy.options import Options


def parse_host_map(rules: Sequence[str], source: str) -> HostMap:
    """`HOST[:PORT]=IP:PORT` rules; `source` (an option or flag name) is named in any error."""
    try:
        return HostMap.parse(tuple(rules))
    except ValidationError as exc:
        raise SusbenchError(describe_validation_error(source, exc)) from None
    except ValueError as exc:
        raise SusbenchError(f"{source}: {exc}") from None


class HostMapAddon:
    """`resolve` rules answer the proxy's name lookups, as curl's --resolve/--connect-to do.

    Only the lookup is answered from the map: mitmproxy still files each connection (and the
    requests on it) under the original `host:port`, keeps Host and SNI, reuses connections and
    verifies upstream TLS for the original name. Rules apply to host names, not IP literals.
    """

    def __init__(self) -> None:
        from mitmproxy.options import Options

        self.host_map = HostMap()
        self._options: Options = Options()
        self._loop: asyncio.AbstractEventLoop | None = None

    def load(self, loader: Loader) -> None:
        self._options = loader.master.options
        loader.add_option(
            "resolve",
            Sequence[str],
            [],
            "Connect to IP:PORT for HOST[:PORT] (HOST may be a glob, e.g. '*.test=127.0.0.1:8080').",
        )

    def configure(self, updated: set[str]) -> None:
        if "resolve" in updated:
            try:
                self.host_map = parse_host_map(self._options.resolve, "resolve")
            except SusbenchError as exc:
                from mitmproxy import exceptions

                raise exceptions.OptionsError(str(exc)) from None

    def running(self) -> None:
        """Answer lookups on the proxy's event loop, where mitmproxy resolves before connecting.

        Rewriting `server.address` instead would rename the connection: mitmproxy keys reuse and
        the URLs of requests in a CONNECT tunnel by it, and refuses to change it once open.
        """
        loop = asyncio.get_running_loop()
        system_lookup = loop.getaddrinfo

        async def getaddrinfo(
            host: bytes | str | None, port: bytes | str | int | None, **hints: Any
        ) -> list[tuple[socket.AddressFamily, socket.SocketKind, int, str, tuple[Any, ...]]]:
            target = None
            if isinstance(host, str) and isinstance(port, int):
                target = self.host_map.lookup(host, port)
            if target is not None:
                host, port = target
            return await system_lookup(host, port, **hints)

        loop.getaddrinfo = getaddrinfo  # type: ignore[method-assign]
        self._loop = loop

    def done(self) -> None:
        if self._loop is not None:
            del self._loop.getaddrinfo
            self._loop = None
