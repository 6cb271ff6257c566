"""The direct replayer's TLS: our own replay CA and per-host leaf certificates issued on demand.

Chromium reaches the direct replayer for every host (`--host-resolver-rules`), so the server
learns the host only from SNI; a leaf for it is issued then and cached on disk. Every leaf carries
the same key, so one `--ignore-certificate-errors-spki-list` pin covers all hosts and no
certificate check is switched off. The CA key stays in `cache_dir()/replay-ca/`, never in a
snapshot or the repo. Key and certificate building is the local web's (`susbench.web.tls`).
"""

from __future__ import annotations

import hashlib
import re
import ssl
from pathlib import Path

from cryptography.hazmat.primitives import serialization

from susbench.paths import cache_dir
from susbench.web.tls import _ca_cert, _key, _leaf_cert, _leaf_is_current, _locked, _write, spki_hash

CA_NAME = "SusBench Replay CA"
DEFAULT_HOST = "localhost"
_SAFE_HOST = re.compile(r"^[a-z0-9][a-z0-9.-]{0,252}$")


def replay_ca_dir() -> Path:
    return cache_dir() / "replay-ca"


class ReplayCA:
    """Server-side TLS contexts for any host, selected by SNI; `spki` is the pin for Chromium."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory or replay_ca_dir()
        with _locked(self.directory):
            self._ca_key = _key(self.directory / "ca-key.pem")
            self._ca = _ca_cert(self.directory / "ca.pem", self._ca_key, CA_NAME)
            self._leaf_key = _key(self.directory / "leaf-key.pem")
        self.spki = spki_hash(self._leaf_key)
        self._contexts: dict[str, ssl.SSLContext] = {}
        self.context = self.context_for(DEFAULT_HOST)
        self.context.sni_callback = self._select

    @property
    def ca_cert_path(self) -> Path:
        return self.directory / "ca.pem"

    def context_for(self, host: str) -> ssl.SSLContext:
        """A context serving a leaf for `host` (issued once, then reused from the cache dir)."""
        host = host.strip(".").lower()
        cached = self._contexts.get(host)
        if cached is not None:
            return cached
        name = host if _SAFE_HOST.match(host) else hashlib.sha256(host.encode()).hexdigest()
        leaf = self.directory / "leaves" / f"{name}.pem"
        with _locked(self.directory):
            if not _leaf_is_current(leaf, (host,), self._ca):
                leaf.parent.mkdir(exist_ok=True)
                cert = _leaf_cert((host,), self._leaf_key, self._ca_key, self._ca)
                chain = cert.public_bytes(serialization.Encoding.PEM) + self._ca.public_bytes(
                    serialization.Encoding.PEM
                )
                _write(leaf, chain)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(leaf, self.directory / "leaf-key.pem")
        context.set_alpn_protocols(["http/1.1"])
        self._contexts[host] = context
        return context

    def _select(self, connection: ssl.SSLObject, server_name: str | None, _: ssl.SSLContext) -> None:
        if server_name:
            connection.context = self.context_for(server_name)
