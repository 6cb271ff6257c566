"""The direct replayer's TLS: the replay CA (`susbench.core.certs`) and per-host leaves issued on demand.

Chromium reaches the direct replayer for every host (`--host-resolver-rules`), so the server
learns the host only from SNI; a leaf for it is issued then and cached on disk. Every leaf carries
the same key, so one `--ignore-certificate-errors-spki-list` pin covers all hosts and no
certificate check is switched off. The CA key stays in `cache_dir()/replay-ca/`.
"""

from __future__ import annotations

import hashlib
import re
import ssl
from pathlib import Path

from susbench.core.certs import CertificateAuthority
from susbench.core.paths import cache_dir

CA_NAME = "SusBench Replay CA"
DEFAULT_HOST = "localhost"
_SAFE_HOST = re.compile(r"^[a-z0-9][a-z0-9.-]{0,252}$")


def replay_ca_dir() -> Path:
    return cache_dir() / "replay-ca"


class ReplayCA:
    """Server-side TLS contexts for any host, selected by SNI; `spki` is the pin for Chromium."""

    def __init__(self, directory: Path | None = None) -> None:
        self.authority = CertificateAuthority(directory or replay_ca_dir(), CA_NAME)
        self.spki = self.authority.spki
        self._contexts: dict[str, ssl.SSLContext] = {}
        self.context = self.context_for(DEFAULT_HOST)
        self.context.sni_callback = self._select

    @property
    def ca_cert_path(self) -> Path:
        return self.authority.ca_cert_path

    def context_for(self, host: str) -> ssl.SSLContext:
        """A context serving a leaf for `host` (issued once, then reused from the cache dir)."""
        host = host.strip(".").lower()
        cached = self._contexts.get(host)
        if cached is not None:
            return cached
        name = host if _SAFE_HOST.match(host) else hashlib.sha256(host.encode()).hexdigest()
        chain = self.authority.leaf(self.authority.directory / "leaves" / f"{name}.pem", (host,))
        context = self.authority.server_context(chain)
        self._contexts[host] = context
        return context

    def _select(self, connection: ssl.SSLObject, server_name: str | None, _: ssl.SSLContext) -> None:
        if server_name:
            connection.context = self.context_for(server_name)
