"""The local web's TLS: one leaf naming every site host, from the local web's CA (`susbench.core.certs`).

Chromium pins the leaf key's SPKI; mitmproxy trusts the CA certificate. The leaf is re-issued
(same key) when the host list changes or it nears expiry; the CA key never leaves the cache.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from pathlib import Path

from susbench.core.certs import CertificateAuthority
from susbench.core.paths import cache_dir

CA_NAME = "SusBench Local Web CA"


def ca_dir() -> Path:
    """`cache_dir()/localweb-ca` (`$SUSBENCH_HOME/localweb-ca` or `~/.cache/susbench/localweb-ca`)."""
    return cache_dir() / "localweb-ca"


@dataclass(frozen=True)
class TlsFiles:
    ca_cert: Path
    leaf_cert: Path
    leaf_key: Path
    spki: str
    context: ssl.SSLContext


def ensure_tls(hosts: tuple[str, ...], directory: Path | None = None, leaf: str = "leaf.pem") -> TlsFiles:
    """Create (once) or reuse the CA, the shared leaf key and a leaf cert covering `hosts`, kept as
    `leaf` in the CA's folder (each served app has its own, so fronts never re-issue each other's)."""
    authority = CertificateAuthority(directory or ca_dir(), CA_NAME)
    chain = authority.leaf(authority.directory / leaf, hosts)
    return TlsFiles(
        ca_cert=authority.ca_cert_path,
        leaf_cert=chain,
        leaf_key=authority.leaf_key_path,
        spki=authority.spki,
        context=authority.server_context(chain),
    )
