"""The certificate module: private CA directories, leaves that verify fully, pins that match."""

from __future__ import annotations

import socket
import ssl
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding

from susbench.core.certs import CertificateAuthority, certificate_pin, mitmproxy_ca_pin
from susbench.core.errors import SusbenchError


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_ca_directory_is_private_and_made_once(tmp_path: Path) -> None:
    directory = tmp_path / "ca"
    first = CertificateAuthority(directory, "Test CA")
    assert _mode(directory) == 0o700
    assert _mode(directory / "ca-key.pem") == 0o600 and _mode(first.leaf_key_path) == 0o600
    ca_pem = first.ca_cert_path.read_bytes()
    again = CertificateAuthority(directory, "Test CA")
    assert again.spki == first.spki and again.ca_cert_path.read_bytes() == ca_pem
    assert x509.load_pem_x509_certificate(ca_pem).subject.rfc4514_string().startswith("CN=Test CA")


@contextmanager
def _tls_server(context: ssl.SSLContext) -> Iterator[int]:
    """Accept TLS handshakes on a loopback port until the block ends."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                raw, _ = listener.accept()
            except TimeoutError:
                continue
            with raw:
                raw.settimeout(5)
                try:
                    with context.wrap_socket(raw, server_side=True) as stream:
                        stream.recv(1)
                except (ssl.SSLError, OSError):
                    continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        listener.close()


def _handshake(port: int, ca_cert: Path, host: str) -> bytes:
    client = ssl.create_default_context(cafile=str(ca_cert))
    with (
        socket.create_connection(("127.0.0.1", port), timeout=5) as raw,
        client.wrap_socket(raw, server_hostname=host) as stream,
    ):
        der = stream.getpeercert(binary_form=True)
    assert der is not None
    return der


def test_leaves_verify_fully_and_carry_the_pinned_key(tmp_path: Path) -> None:
    authority = CertificateAuthority(tmp_path / "ca", "Test CA")
    chain = authority.leaf(tmp_path / "ca" / "leaf.pem", ("a.test", "b.test"))
    with _tls_server(authority.server_context(chain)) as port:
        der = _handshake(port, authority.ca_cert_path, "b.test")
        with pytest.raises(ssl.SSLCertVerificationError):
            _handshake(port, authority.ca_cert_path, "c.test")
    leaf_pem = x509.load_der_x509_certificate(der).public_bytes(Encoding.PEM)
    assert certificate_pin(leaf_pem) == authority.spki


def test_a_leaf_is_reissued_when_hosts_grow_or_another_ca_made_it(tmp_path: Path) -> None:
    authority = CertificateAuthority(tmp_path / "ca", "Test CA")
    path = tmp_path / "ca" / "leaf.pem"
    first = authority.leaf(path, ("a.test",)).read_bytes()
    assert authority.leaf(path, ("a.test",)).read_bytes() == first
    grown = authority.leaf(path, ("a.test", "c.test")).read_bytes()
    names = x509.load_pem_x509_certificate(grown).extensions.get_extension_for_class(
        x509.SubjectAlternativeName
    )
    assert "c.test" in names.value.get_values_for_type(x509.DNSName)
    other = CertificateAuthority(tmp_path / "other", "Other CA")
    other.leaf(path, ("a.test",))
    leaf = x509.load_pem_x509_certificate(path.read_bytes())
    leaf.verify_directly_issued_by(x509.load_pem_x509_certificate(other.ca_cert_path.read_bytes()))


def test_processes_sharing_a_cache_make_one_ca(tmp_path: Path) -> None:
    script = (
        "import sys; from pathlib import Path; from susbench.core.certs import CertificateAuthority; "
        "print(CertificateAuthority(Path(sys.argv[1]), 'Shared CA').spki)"
    )
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(tmp_path / "shared")], stdout=subprocess.PIPE, text=True
        )
        for _ in range(4)
    ]
    pins = {process.communicate(timeout=60)[0].strip() for process in processes}
    assert all(process.returncode == 0 for process in processes)
    assert len(pins) == 1 and pins == {CertificateAuthority(tmp_path / "shared", "Shared CA").spki}


def test_a_missing_mitmproxy_ca_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(SusbenchError, match=r"mitmproxy-ca-cert\.pem: mitmproxy's CA certificate"):
        mitmproxy_ca_pin(tmp_path)
