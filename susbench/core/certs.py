"""Our certificate authorities, the leaves they issue, and the SPKI pins Chromium trusts them by.

A CA directory holds `ca-key.pem`, `ca.pem` and one `leaf-key.pem` that every leaf it issues
carries, so one `--ignore-certificate-errors-spki-list` pin covers all its hosts and no certificate
check is ever switched off. The directory is private (0700, keys 0600), lives in the user cache
(`susbench.core.paths.cache_dir()`), never in a snapshot or the repository, and is created under a lock
so parallel processes sharing the cache make each file once. mitmproxy makes its own CA in its
confdir; `mitmproxy_ca_pin` pins it the same way (mitmproxy's leaves carry the CA's key).
"""

from __future__ import annotations

import base64
import datetime as dt
import fcntl
import hashlib
import ipaddress
import os
import ssl
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.types import PublicKeyTypes
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from susbench.core.errors import SusbenchError

ORGANIZATION = "SusBench Replay"
CA_DAYS = 3650
LEAF_DAYS = 397
RENEW_BEFORE = dt.timedelta(days=30)
MITMPROXY_CA_CERT = "mitmproxy-ca-cert.pem"


def spki_pin(key: PublicKeyTypes) -> str:
    """Base64 SHA-256 of a SubjectPublicKeyInfo, the form Chromium's pin list expects."""
    der = key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return base64.b64encode(hashlib.sha256(der).digest()).decode("ascii")


def certificate_pin(pem: bytes) -> str:
    """The SPKI pin of a PEM certificate's public key."""
    return spki_pin(x509.load_pem_x509_certificate(pem).public_key())


def private_dir(path: Path) -> Path:
    """`path`, created readable by its owner only (it holds private keys)."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path


def mitmproxy_ca_pin(confdir: Path) -> str:
    """Pin of the CA mitmproxy made in `confdir`, which is also the key of every leaf it forges."""
    path = confdir / MITMPROXY_CA_CERT
    try:
        return certificate_pin(path.read_bytes())
    except OSError as exc:
        raise SusbenchError(f"{path}: mitmproxy's CA certificate cannot be read: {exc.strerror}") from None


@contextmanager
def _locked(directory: Path) -> Iterator[None]:
    """Serialise creation across processes (parallel test runs share the cache)."""
    private_dir(directory)
    with open(directory / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _write(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Write atomically; the file has `mode` from its first byte on."""
    tmp = path.with_name(path.name + ".tmp")
    descriptor = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(data)
    os.replace(tmp, path)


def _key(path: Path) -> ec.EllipticCurvePrivateKey:
    if path.exists():
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
        if not isinstance(key, ec.EllipticCurvePrivateKey):
            raise SusbenchError(f"{path}: expected an EC private key made by susbench")
        return key
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    _write(path, pem, mode=0o600)
    return key


def _name(common_name: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, ORGANIZATION),
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
        ]
    )


def _ca_certificate(path: Path, key: ec.EllipticCurvePrivateKey, common_name: str) -> x509.Certificate:
    if path.exists():
        return x509.load_pem_x509_certificate(path.read_bytes())
    now = dt.datetime.now(dt.UTC)
    public = key.public_key()
    usage = x509.KeyUsage(
        digital_signature=True,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=True,
        crl_sign=True,
        encipher_only=False,
        decipher_only=False,
    )
    certificate = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name))
        .issuer_name(_name(common_name))
        .public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=CA_DAYS))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(usage, critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
        .sign(key, hashes.SHA256())
    )
    _write(path, certificate.public_bytes(serialization.Encoding.PEM))
    return certificate


class CertificateAuthority:
    """A CA kept in `directory`; `spki` pins every leaf it issues (they share one key)."""

    def __init__(self, directory: Path, common_name: str) -> None:
        self.directory = directory
        with _locked(directory):
            self._ca_key = _key(directory / "ca-key.pem")
            self._ca = _ca_certificate(self.ca_cert_path, self._ca_key, common_name)
            self._leaf_key = _key(self.leaf_key_path)
        self.spki = spki_pin(self._leaf_key.public_key())

    @property
    def ca_cert_path(self) -> Path:
        return self.directory / "ca.pem"

    @property
    def leaf_key_path(self) -> Path:
        return self.directory / "leaf-key.pem"

    def leaf(self, path: Path, hosts: Sequence[str]) -> Path:
        """The chain (leaf + CA) at `path` naming `hosts`, issued unless a current one is there."""
        with _locked(self.directory):
            if not self._is_current(path, hosts):
                path.parent.mkdir(parents=True, exist_ok=True)
                chain = self._issue(hosts).public_bytes(serialization.Encoding.PEM)
                _write(path, chain + self._ca.public_bytes(serialization.Encoding.PEM))
        return path

    def server_context(self, chain: Path) -> ssl.SSLContext:
        """A TLS server context presenting `chain` (from `leaf`), HTTP/1.1 only."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(chain, self.leaf_key_path)
        context.set_alpn_protocols(["http/1.1"])
        return context

    def _is_current(self, path: Path, hosts: Sequence[str]) -> bool:
        """Issued by this CA for this leaf key, naming every host, and not near expiry."""
        if not path.exists():
            return False
        certificate = x509.load_pem_x509_certificate(path.read_bytes())
        try:
            certificate.verify_directly_issued_by(self._ca)
        except (ValueError, TypeError, InvalidSignature):
            return False
        if spki_pin(certificate.public_key()) != self.spki:
            return False
        if certificate.not_valid_after_utc - RENEW_BEFORE < dt.datetime.now(dt.UTC):
            return False
        names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        return set(names.get_values_for_type(x509.DNSName)) >= set(hosts)

    def _issue(self, hosts: Sequence[str]) -> x509.Certificate:
        now = dt.datetime.now(dt.UTC)
        names: list[x509.GeneralName] = [x509.DNSName(host) for host in (*hosts, "localhost")]
        names.append(x509.IPAddress(ipaddress.ip_address("127.0.0.1")))
        public = self._leaf_key.public_key()
        return (
            x509.CertificateBuilder()
            .subject_name(_name(hosts[0]))
            .issuer_name(self._ca.subject)
            .public_key(public)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(days=1))
            .not_valid_after(now + dt.timedelta(days=LEAF_DAYS))
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(self._ca_key.public_key()), critical=False
            )
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
            .sign(self._ca_key, hashes.SHA256())
        )
