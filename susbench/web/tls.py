"""The local web's TLS: a CA created once per machine (cached), one shared leaf key, one leaf cert.

The CA key never leaves the cache directory. Chromium pins the leaf key's SPKI; mitmproxy trusts
the CA certificate. The leaf is re-issued (same key) when the host list changes or it nears expiry.
"""

from __future__ import annotations

import base64
import datetime as dt
import fcntl
import hashlib
import ipaddress
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

LEAF_DAYS = 397
RENEW_BEFORE = dt.timedelta(days=30)


def ca_dir() -> Path:
    """`$SUSBENCH_HOME/localweb-ca` if set, else `~/.cache/susbench/localweb-ca`."""
    home = os.environ.get("SUSBENCH_HOME")
    base = Path(home) if home else Path.home() / ".cache" / "susbench"
    return base / "localweb-ca"


@dataclass(frozen=True)
class TlsFiles:
    ca_cert: Path
    leaf_cert: Path
    leaf_key: Path
    spki: str


@contextmanager
def _locked(directory: Path) -> Iterator[None]:
    """Serialise creation across processes (parallel test runs share the cache)."""
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    with open(directory / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _write(path: Path, data: bytes, private: bool = False) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_bytes(data)
    if private:
        tmp.chmod(0o600)
    os.replace(tmp, path)


def _key(path: Path) -> ec.EllipticCurvePrivateKey:
    if path.exists():
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
        assert isinstance(key, ec.EllipticCurvePrivateKey)
        return key
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    _write(path, pem, private=True)
    return key


def _name(common_name: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "SusBench Replay local web"),
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
        ]
    )


def _ca_cert(
    path: Path, key: ec.EllipticCurvePrivateKey, common_name: str = "SusBench Local Web CA"
) -> x509.Certificate:
    if path.exists():
        return x509.load_pem_x509_certificate(path.read_bytes())
    now = dt.datetime.now(dt.UTC)
    public = key.public_key()
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name))
        .issuer_name(_name(common_name))
        .public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=3650))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
        .sign(key, hashes.SHA256())
    )
    _write(path, cert.public_bytes(serialization.Encoding.PEM))
    return cert


def _leaf_is_current(path: Path, hosts: tuple[str, ...], ca: x509.Certificate) -> bool:
    if not path.exists():
        return False
    cert = x509.load_pem_x509_certificate(path.read_bytes())
    if cert.issuer != ca.subject:
        return False
    if cert.not_valid_after_utc - RENEW_BEFORE < dt.datetime.now(dt.UTC):
        return False
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    return set(names.get_values_for_type(x509.DNSName)) >= set(hosts)


def _leaf_cert(
    hosts: tuple[str, ...],
    leaf_key: ec.EllipticCurvePrivateKey,
    ca_key: ec.EllipticCurvePrivateKey,
    ca: x509.Certificate,
) -> x509.Certificate:
    now = dt.datetime.now(dt.UTC)
    names: list[x509.GeneralName] = [x509.DNSName(host) for host in (*hosts, "localhost")]
    names.append(x509.IPAddress(ipaddress.ip_address("127.0.0.1")))
    return (
        x509.CertificateBuilder()
        .subject_name(_name(hosts[0]))
        .issuer_name(ca.subject)
        .public_key(leaf_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=LEAF_DAYS))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(leaf_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )


def spki_hash(key: ec.EllipticCurvePrivateKey) -> str:
    """Base64 SHA-256 of the SubjectPublicKeyInfo, the form Chromium's pin list expects."""
    der = key.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return base64.b64encode(hashlib.sha256(der).digest()).decode()


def ensure_tls(hosts: tuple[str, ...], directory: Path | None = None) -> TlsFiles:
    """Create (once) or reuse the CA, the shared leaf key and a leaf cert covering `hosts`."""
    directory = directory or ca_dir()
    with _locked(directory):
        ca_key = _key(directory / "ca-key.pem")
        ca = _ca_cert(directory / "ca.pem", ca_key)
        leaf_key = _key(directory / "leaf-key.pem")
        leaf_path = directory / "leaf.pem"
        if not _leaf_is_current(leaf_path, hosts, ca):
            cert = _leaf_cert(hosts, leaf_key, ca_key, ca)
            chain = cert.public_bytes(serialization.Encoding.PEM) + ca.public_bytes(
                serialization.Encoding.PEM
            )
            _write(leaf_path, chain)
    return TlsFiles(
        ca_cert=directory / "ca.pem",
        leaf_cert=leaf_path,
        leaf_key=directory / "leaf-key.pem",
        spki=spki_hash(leaf_key),
    )
