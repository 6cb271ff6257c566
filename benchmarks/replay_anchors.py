"""The anchors the replay benchmark compares against, each run as its own process on loopback.

nginx serves the snapshot's recorded bytes (extracted into a root, one exact `location` per URL
path with the recorded Content-Type/Content-Encoding); mitmdump records and server-replays the
same page; pywb replays the snapshot in proxy mode. Our own replayers run as `susbench replay
serve` subprocesses, so no server shares the benchmark driver's interpreter.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

from cryptography import x509

from susbench.browser import free_port
from susbench.core.certs import mitmproxy_ca_pin, spki_pin
from susbench.core.paths import cache_dir
from susbench.snapshot import Snapshot
from susbench.web.tls import TlsFiles

PYWB_VENV = cache_dir() / "venvs" / "pywb"  # benchmarks/setup_pywb.sh
READY_TIMEOUT_S = 60.0
SAFE_PATH = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~/%!$&'()*+,;=:@")


def wait_for_port(port: int, process: subprocess.Popen[bytes], name: str) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{name} did not listen on {port} within {READY_TIMEOUT_S:.0f} s")


@contextmanager
def running(
    command: list[str], port: int, name: str, cwd: Path | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    """A server subprocess, ready when `port` accepts; stopped with SIGINT (flushes mitmdump's -w)."""
    log = open(Path(cwd or "/tmp") / f"{name.replace(' ', '-')}.log", "wb")  # noqa: SIM115 - closed below
    process = subprocess.Popen(command, cwd=cwd, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for_port(port, process, name)
        yield process
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def ensure_apt(*packages: str) -> None:
    missing = [name for name in packages if shutil.which(name) is None]
    if missing:
        subprocess.run(["apt-get", "install", "-y", "-qq", *missing], check=True, capture_output=True)


# --- nginx ------------------------------------------------------------------------------------


def nginx_config(snapshot_path: Path, work: Path, tls: TlsFiles, tls_port: int, plain_port: int) -> Path:
    """Extract every recorded GET 200 (first capture per host+path) and write an nginx.conf for it.

    TLS 1.3 is on, as in our replayers and nginx's own default since 1.23.4: Debian's 1.22 stops at
    TLS 1.2, whose resumed handshakes skip the key exchange that TLS 1.3's still make.
    """
    files = work / "files"
    files.mkdir(parents=True, exist_ok=True)
    locations: dict[str, dict[str, str]] = {}
    with Snapshot.open(snapshot_path) as snapshot:
        for entry in sorted(snapshot.entries(), key=lambda item: item.seq):
            parts = urlsplit(entry.url)
            host, path = parts.hostname or "", parts.path or "/"
            if entry.method != "GET" or entry.status != 200 or not set(path) <= SAFE_PATH:
                continue
            if path in locations.setdefault(host, {}):
                continue
            response = snapshot.read_response(entry)
            target = files / hashlib.sha256(entry.url.encode()).hexdigest()
            target.write_bytes(response.body)
            lines = [f'default_type "{response.header("Content-Type") or "application/octet-stream"}";']
            if response.header("Content-Encoding"):
                lines.append(f'add_header Content-Encoding "{response.header("Content-Encoding")}";')
            lines.append(f"try_files /{target.name} =404;")
            locations[host][path] = " ".join(lines)
    servers = []
    for host, paths in locations.items():
        body = "\n".join(f'    location = "{path}" {{ {rules} }}' for path, rules in paths.items())
        servers.append(
            f"  server {{\n    listen 127.0.0.1:{tls_port} ssl;\n    listen 127.0.0.1:{plain_port};\n"
            f"    server_name {host};\n    root {files};\n    ssl_certificate {tls.leaf_cert};\n"
            f"    ssl_certificate_key {tls.leaf_key};\n{body}\n  }}"
        )
    user = "user root;\n" if os.geteuid() == 0 else ""
    conf = work / "nginx.conf"
    conf.write_text(
        f"{user}worker_processes 2;\ndaemon off;\npid {work}/nginx.pid;\nerror_log {work}/error.log warn;\n"
        "events { worker_connections 4096; }\n"
        "http {\n  access_log off;\n  types {}\n  sendfile on;\n  tcp_nodelay on;\n"
        "  ssl_protocols TLSv1.2 TLSv1.3;\n"
        "  keepalive_requests 1000000;\n  keepalive_timeout 120;\n"
        f"  client_body_temp_path {work}/body;\n  proxy_temp_path {work}/proxy;\n"
        f"  fastcgi_temp_path {work}/fastcgi;\n  uwsgi_temp_path {work}/uwsgi;\n"
        f"  scgi_temp_path {work}/scgi;\n" + "\n".join(servers) + "\n}\n"
    )
    return conf


def nginx_command(conf: Path) -> list[str]:
    return [shutil.which("nginx") or "/usr/sbin/nginx", "-p", str(conf.parent), "-c", str(conf)]


# --- mitmproxy's own record and server replay ------------------------------------------------

HOSTMAP_ADDON = """
def server_connect(data):
    if data.server.address and data.server.address[0].endswith(".test"):
        data.server.address = ("127.0.0.1", {port})

def response(flow):
    name = (flow.request.host_header or "").split(":")[0]
    if name.endswith(".test"):
        flow.request.data.host = name
        flow.request.data.port = 443 if flow.request.scheme == "https" else 80
"""


def mitmdump() -> str:
    return str(Path(sys.executable).with_name("mitmdump"))


def mitm_record_command(work: Path, port: int, web_port: int, ca: Path, flows: Path) -> list[str]:
    """mitmdump -w, reaching the local web's *.test hosts through a host-map addon (which also
    keeps the flows' host and port those of the site, not of the loopback server, so they replay)."""
    addon = work / "hostmap.py"
    addon.write_text(HOSTMAP_ADDON.format(port=web_port))
    return [
        mitmdump(), "-q", "--listen-host", "127.0.0.1", "--listen-port", str(port),
        "--set", f"confdir={work / 'mitm-ca'}", "--set", f"ssl_verify_upstream_trusted_ca={ca}",
        "-s", str(addon), "-w", str(flows),
    ]  # fmt: skip


def mitm_replay_command(work: Path, port: int, flows: Path) -> list[str]:
    """The anchor setup: kill misses, never connect upstream, cache-buster `_` ignored by hand."""
    return [
        mitmdump(), "-q", "--listen-host", "127.0.0.1", "--listen-port", str(port),
        "--set", f"confdir={work / 'mitm-ca'}", "--server-replay", str(flows),
        "--set", "server_replay_extra=kill", "--set", "connection_strategy=lazy",
        "--set", "server_replay_ignore_params=_", "--set", "server_replay_reuse=true",
        "--set", "http2=false",
    ]  # fmt: skip


def mitm_spki(work: Path) -> str:
    return mitmproxy_ca_pin(work / "mitm-ca")


# --- pywb proxy mode ----------------------------------------------------------------------------


def pywb_collection(snapshot: Path, work: Path) -> Path:
    work.mkdir(parents=True, exist_ok=True)
    manager = str(PYWB_VENV / "bin" / "wb-manager")
    subprocess.run([manager, "init", "bench"], cwd=work, check=True, capture_output=True)
    subprocess.run(
        [manager, "add", "--unpack-wacz", "bench", str(snapshot)], cwd=work, check=True, capture_output=True
    )
    return work


def pywb_command(port: int) -> list[str]:
    return [str(PYWB_VENV / "bin" / "wayback"), "-b", "127.0.0.1", "-p", str(port), "--proxy", "bench"]


def proxied_leaf_spki(proxy_port: int, host: str) -> str:
    """SPKI of the leaf a MITM proxy presents for `host` (pywb makes a fresh RSA key per host
    and sends no CA in the chain, so its leaves, not its CA, are what Chromium can pin)."""
    with socket.create_connection(("127.0.0.1", proxy_port), timeout=10) as raw:
        raw.sendall(f"CONNECT {host}:443 HTTP/1.1\r\nHost: {host}:443\r\n\r\n".encode())
        reply = b""
        while b"\r\n\r\n" not in reply:
            reply += raw.recv(4096)
        if b" 200" not in reply.split(b"\r\n", 1)[0]:
            raise RuntimeError(f"CONNECT {host} through port {proxy_port}: {reply[:80]!r}")
        probe = ssl.create_default_context()
        probe.check_hostname = False
        probe.verify_mode = ssl.CERT_NONE
        with probe.wrap_socket(raw, server_hostname=host) as stream:
            der = stream.getpeercert(binary_form=True)
    assert der is not None
    return spki_pin(x509.load_der_x509_certificate(der).public_key())


def free_ports(count: int) -> list[int]:
    ports: set[int] = set()
    while len(ports) < count:
        ports.add(free_port())
    return sorted(ports)
