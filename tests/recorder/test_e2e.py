"""The recorder end to end: local web -> mitmproxy + WARC addon -> WACZ, checked by other tools."""

from __future__ import annotations

import base64
import gzip
import hashlib
import http.client
import socket
import ssl
import subprocess
import time
import urllib.request
import zipfile
import zlib
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from susbench.browser import free_port
from susbench.core.paths import REPO_ROOT
from susbench.recorder.proxy import RecordingProxy, mitmproxy_confdir
from susbench.snapshot import Snapshot, verify_snapshot
from susbench.snapshot.records import WarcRecord, parse_http_request, scan_warc
from susbench.web import LocalWeb
from tests.support import outside_tools

pytestmark = pytest.mark.e2e
WARCIO = Path(REPO_ROOT) / ".venv" / "bin" / "warcio"


def _warc_bytes(path: Path, tmp_path: Path) -> Path:
    target = tmp_path / "data.warc.gz"
    with zipfile.ZipFile(path) as archive:
        target.write_bytes(archive.read("archive/data.warc.gz"))
    return target


def test_warcio_check_and_hashes_pass(recorded_snapshot: Path, tmp_path: Path) -> None:
    warc = _warc_bytes(recorded_snapshot, tmp_path)
    result = subprocess.run(
        [str(WARCIO), "check", "-v", str(warc)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "digest pass" in result.stdout
    report = verify_snapshot(recorded_snapshot)
    assert report.ok, report.problems
    assert report.members_checked == 4 and report.records > 20


def test_records_pairs_protocol_and_warcinfo(recorded_snapshot: Path) -> None:
    with Snapshot.open(recorded_snapshot) as snapshot:
        entries = list(snapshot.entries())
        manifest = snapshot.manifest
        assert manifest.hosts == ("pizzapalace.test",)
        assert manifest.browser_version.startswith("Chromium")
        assert manifest.pages[0].title.endswith("Pizza Palace")
        assert all(page.requests > 0 for page in manifest.pages)
        html = next(
            e for e in entries if e.url == "https://pizzapalace.test/" and e.record_type == "response"
        )
        record = snapshot.read_record(html)
        assert record.header("WARC-Protocol") == "http/1.1"
        assert any(k == "WARC-Protocol" and v.startswith("tls/1.") for k, v in record.headers)
        assert record.header("WARC-Concurrent-To") is None
        response = snapshot.read_response(html)
        assert response.status == 200 and response.header("Content-Encoding") == "gzip"
        assert b"<html" in gzip.decompress(response.body).lower()
        assert all(key.lower() != "transfer-encoding" for key, _ in response.headers)
    with zipfile.ZipFile(recorded_snapshot) as archive:
        head = archive.read("archive/data.warc.gz")[:4000]
    first = zlib.decompressobj(31).decompress(head)
    assert b"WARC-Type: warcinfo" in first and b"mitmproxy" in first and b"Chromium" in first


def test_post_flow_has_whole_body_digest(recorded_snapshot: Path, tmp_path: Path) -> None:
    with Snapshot.open(recorded_snapshot) as snapshot:
        posts = [entry for entry in snapshot.entries() if entry.method == "POST"]
        assert posts, "add to cart must be recorded as a POST"
        post = posts[0]
        assert post.url == "https://pizzapalace.test/cart/add"
        assert post.request_body and post.request_body.startswith("__wb_method=post&")
        assert "__wb_method=post" in post.surt
        response = snapshot.read_record(post)
        request_id = response.header("WARC-Record-ID")
        assert request_id
    warc = _warc_bytes(recorded_snapshot, tmp_path)
    requests = [r for r in scan_warc(warc) if isinstance(r, WarcRecord) and r.type == "request"]
    (request,) = [r for r in requests if r.header("WARC-Concurrent-To") == request_id]
    body = parse_http_request(request.block).body
    assert body and post.req_digest == hashlib.sha256(body).hexdigest()


def test_revisits_for_identical_payloads(recorded_snapshot: Path) -> None:
    with Snapshot.open(recorded_snapshot) as snapshot:
        revisits = [entry for entry in snapshot.entries() if entry.record_type == "revisit"]
        assert revisits
        originals = {e.digest: e for e in snapshot.entries() if e.record_type == "response"}
        for revisit in revisits:
            original = originals[revisit.digest]
            assert original.seq < revisit.seq
            assert snapshot.read_response(revisit).body == snapshot.read_response(original).body


def test_no_private_key_in_the_snapshot(recorded_snapshot: Path, local_web: LocalWeb) -> None:
    data = recorded_snapshot.read_bytes()
    assert b"PRIVATE KEY" not in data
    ca_pem = (mitmproxy_confdir() / "mitmproxy-ca.pem").read_bytes()
    key = serialization.load_pem_private_key(ca_pem, password=None)
    for der in (
        key.private_bytes(
            serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ),
        key.private_bytes(
            serialization.Encoding.DER,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        ),
    ):
        assert der not in data and der[-64:] not in data
    assert not str(mitmproxy_confdir()).startswith(str(REPO_ROOT))


def _through_proxy(port: int, host: str) -> tuple[bytes, bytes]:
    """CONNECT + TLS (proxy's leaf not verified here) + GET /; returns (leaf DER, response head)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        raw.sendall(f"CONNECT {host}:443 HTTP/1.1\r\nHost: {host}:443\r\n\r\n".encode())
        assert b" 200 " in raw.recv(4096)
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        with context.wrap_socket(raw, server_hostname=host) as tls:
            der = tls.getpeercert(binary_form=True) or b""
            tls.sendall(f"GET / HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
            head = tls.recv(200)
    return der, head


def test_every_leaf_carries_the_ca_key_so_one_spki_pin_suffices(local_web: LocalWeb) -> None:
    with RecordingProxy(
        host_map=local_web.resolve, upstream_ca=local_web.ca_cert_path, record=False
    ) as proxy:
        pins = set()
        for host in ("pizzapalace.test", "voltcart.test"):
            der, head = _through_proxy(proxy.port, host)
            assert head.startswith(b"HTTP/1.1 200")
            spki = (
                x509.load_der_x509_certificate(der)
                .public_key()
                .public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
            )
            pins.add(base64.b64encode(hashlib.sha256(spki).digest()).decode())
        assert pins == {proxy.spki}
        assert proxy.log[0].url == "https://pizzapalace.test/"


def test_the_host_map_keeps_names_and_reuses_one_upstream_connection(local_web: LocalWeb) -> None:
    """Only the name lookup is mapped: flows keep the site's URL and share a kept-alive connection."""
    with RecordingProxy(
        host_map=local_web.resolve, upstream_ca=local_web.ca_cert_path, record=False
    ) as proxy:
        context = ssl.create_default_context(cafile=str(proxy.ca_cert_path))
        connection = http.client.HTTPSConnection("127.0.0.1", proxy.port, context=context, timeout=10)
        connection.set_tunnel("pizzapalace.test", 443)
        before = local_web.connections
        for path in ("/", "/cart", "/static/site.css?v=3"):
            connection.request("GET", path)
            response = connection.getresponse()
            assert response.status == 200
            response.read()
        connection.close()
        assert local_web.connections - before == 1
        assert [entry.url for entry in proxy.log] == [
            "https://pizzapalace.test/",
            "https://pizzapalace.test/cart",
            "https://pizzapalace.test/static/site.css?v=3",
        ]


def test_upstream_tls_is_verified_against_the_given_ca(local_web: LocalWeb) -> None:
    """Trusting only mitmproxy's own CA upstream, the local web's certificate must be refused."""
    wrong_ca = mitmproxy_confdir() / "mitmproxy-ca-cert.pem"
    with RecordingProxy(host_map=local_web.resolve, upstream_ca=wrong_ca) as proxy:
        try:
            _, head = _through_proxy(proxy.port, "pizzapalace.test")
        except (ssl.SSLError, ConnectionError):
            head = b"refused"
        assert not head.startswith(b"HTTP/1.1 200")


@pytest.fixture(scope="session")
def pywb_venv() -> Path:
    return outside_tools.pywb_venv()


def test_pywb_replays_our_snapshot(recorded_snapshot: Path, pywb_venv: Path, tmp_path: Path) -> None:
    """pywb's own tooling takes our WACZ as it is (`wb-manager add` unpacks it) and replays it."""
    manager = subprocess.run(
        [str(pywb_venv / "bin" / "wb-manager"), "init", "snap"], cwd=tmp_path, capture_output=True, text=True
    )
    assert manager.returncode == 0, manager.stderr
    added = subprocess.run(
        [str(pywb_venv / "bin" / "wb-manager"), "add", "--unpack-wacz", "snap", str(recorded_snapshot)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert added.returncode == 0, added.stderr
    port = free_port()
    server = subprocess.Popen(
        [str(pywb_venv / "bin" / "wayback"), "-p", str(port), "-b", "127.0.0.1"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        url = f"http://127.0.0.1:{port}/snap/mp_/https://pizzapalace.test/"
        page = b""
        for _ in range(100):
            try:
                with urllib.request.urlopen(url, timeout=5) as response:
                    page = response.read()
                    break
            except OSError:
                time.sleep(0.2)
        assert b"Pizza Palace" in page
        with urllib.request.urlopen(
            f"http://127.0.0.1:{port}/snap/mp_/https://pizzapalace.test/cart"
        ) as response:
            assert response.status == 200
    finally:
        server.terminate()
        server.wait(timeout=10)
