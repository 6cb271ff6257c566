"""Direct replay (every host resolved to the replayer): raw HTTP/1.1 and TLS, then real Chromium."""

from __future__ import annotations

import hashlib
import random
import socket
import ssl
import time
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, Playwright
from playwright.sync_api import Error as PlaywrightError

from susbench.replayer.check import STARTUP_NOISE_S, fresh_context, launch_browser, replay_profile
from susbench.replayer.direct import DirectReplayServer
from susbench.replayer.service import LOG_EPISODES, Coverage
from susbench.replayer.tls import CA_NAME
from susbench.web import LocalWeb
from tests.support.replay import SETTLE_MS, SyntheticExchange, write_snapshot

PAGE = b"<!doctype html><html><head><title>direct</title></head><body><main id=main>hi</main></body></html>"
BLOB = random.Random(48).randbytes(6 << 20)
"""Bigger than a loopback socket's buffers, so the server's writes block and it must buffer and resume."""


@pytest.fixture(scope="module")
def handmade(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DirectReplayServer]:
    out = tmp_path_factory.mktemp("replay-direct") / "handmade.wacz"
    snapshot = write_snapshot(
        out,
        [
            SyntheticExchange("https://shop.test/", PAGE),
            SyntheticExchange("https://shop.test/app.js?_=1700000000000", b"var a = 1;", "text/javascript"),
            SyntheticExchange("https://shop.test/blob.bin", BLOB, "application/octet-stream"),
        ],
    )
    with DirectReplayServer(snapshot) as server:
        yield server


def _responses(stream: socket.socket, count: int) -> list[tuple[bytes, dict[bytes, bytes], bytes]]:
    """Read `count` Content-Length framed responses off a socket."""
    data = b""
    out = []
    while len(out) < count:
        while b"\r\n\r\n" not in data:
            chunk = stream.recv(65536)
            assert chunk, "connection closed early"
            data += chunk
        head, data = data.split(b"\r\n\r\n", 1)
        status, *lines = head.split(b"\r\n")
        headers = {name.lower(): value.strip() for name, _, value in (line.partition(b":") for line in lines)}
        length = int(headers[b"content-length"])
        while len(data) < length:
            chunk = stream.recv(65536)
            assert chunk, "connection closed mid-body"
            data += chunk
        out.append((status, headers, data[:length]))
        data = data[length:]
    return out


def test_plain_http_keeps_alive_and_answers_pipelined_requests_in_order(handmade: DirectReplayServer) -> None:
    with socket.create_connection(("127.0.0.1", handmade.port)) as stream:
        stream.sendall(
            b"GET /app.js?_=1800000000000 HTTP/1.1\r\nHost: shop.test\r\n\r\n"
            b"GET /never HTTP/1.1\r\nHost: shop.test\r\n\r\n"
            b"GET /app.js?_=1 HTTP/1.1\r\nHost: shop.test\r\nConnection: close\r\n\r\n"
        )
        replies = _responses(stream, 3)
        stream.settimeout(5)
        assert stream.recv(1) == b"", "Connection: close was not honoured"
    (first, first_headers, body), (missed, miss_headers, _), (last, _, _) = replies
    assert first.startswith(b"HTTP/1.1 200") and body == b"var a = 1;"
    assert first_headers[b"x-susbench-replay"] == b"canonical"
    assert missed.startswith(b"HTTP/1.1 404") and miss_headers[b"x-susbench-replay"] == b"miss"
    assert last.startswith(b"HTTP/1.1 200")


def test_https_on_the_same_port_with_a_per_host_leaf_from_the_replay_ca(handmade: DirectReplayServer) -> None:
    """Full verification (chain + hostname) against the replay CA: nothing is switched off."""
    context = ssl.create_default_context(cafile=str(handmade.ca.ca_cert_path))
    with (
        socket.create_connection(("127.0.0.1", handmade.port)) as raw,
        context.wrap_socket(raw, server_hostname="shop.test") as stream,
    ):
        issuer = dict(item[0] for item in stream.getpeercert()["issuer"])
        stream.sendall(b"GET / HTTP/1.1\r\nHost: shop.test\r\nConnection: close\r\n\r\n")
        [(status, headers, body)] = _responses(stream, 1)
    assert issuer["commonName"] == CA_NAME
    assert status.startswith(b"HTTP/1.1 200") and headers[b"connection"] == b"close"
    assert b"<main id=main>hi</main>" in body and b"<script>" in body
    assert handmade.log[-1].url == "https://shop.test/"


def _pinned_client() -> ssl.SSLContext:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def test_tls_sessions_resume_and_serve_the_same_bytes(handmade: DirectReplayServer) -> None:
    """A page load opens several connections to one host; the later ones resume the first's session
    (its ticket), which skips the certificate signature on the server."""
    context = _pinned_client()
    replies, reused, session = [], [], None
    for _ in range(3):
        with (
            socket.create_connection(("127.0.0.1", handmade.port)) as raw,
            context.wrap_socket(raw, server_hostname="shop.test", session=session) as stream,
        ):
            stream.sendall(b"GET / HTTP/1.1\r\nHost: shop.test\r\n\r\n")
            replies += _responses(stream, 1)
            reused.append(stream.session_reused)
            session = stream.session
    assert reused == [False, True, True]
    assert len({body for _, _, body in replies}) == 1 and b"<main id=main>hi</main>" in replies[0][2]


@pytest.mark.parametrize("tls", [False, True], ids=["http", "https"])
def test_a_body_bigger_than_the_socket_buffers_reaches_a_slow_reader_whole(
    handmade: DirectReplayServer, tls: bool
) -> None:
    """The reader waits before reading: the server buffers what the socket refuses, answers the
    pipelined request after it in order, and hangs up (Connection: close) only once all is sent."""
    with socket.create_connection(("127.0.0.1", handmade.port)) as raw:
        stream = _pinned_client().wrap_socket(raw, server_hostname="shop.test") if tls else raw
        stream.sendall(
            b"GET /blob.bin HTTP/1.1\r\nHost: shop.test\r\n\r\n"
            b"GET /app.js?_=1 HTTP/1.1\r\nHost: shop.test\r\nConnection: close\r\n\r\n"
        )
        time.sleep(0.5)
        stream.settimeout(10)
        (status, _, body), (_, _, script) = _responses(stream, 2)
        assert stream.recv(1) == b"", "Connection: close was not honoured"
    assert status.startswith(b"HTTP/1.1 200")
    assert hashlib.sha256(body).digest() == hashlib.sha256(BLOB).digest()
    assert script == b"var a = 1;"


def test_the_log_keeps_the_last_episodes_only(tmp_path: Path) -> None:
    """A worker's replayer serves thousands of episodes: each episode's log is read right after it,
    and older ones are dropped, so the log does not grow with the run (it did: the soak's workers)."""
    snapshot = write_snapshot(tmp_path / "one.wacz", [SyntheticExchange("https://shop.test/", PAGE)])
    with DirectReplayServer(snapshot) as server:
        episode_numbers = []
        for _ in range(LOG_EPISODES + 3):
            episode_numbers.append(server.new_episode())
            for path in (b"/", b"/missing"):
                with socket.create_connection(("127.0.0.1", server.port)) as stream:
                    stream.sendall(
                        b"GET " + path + b" HTTP/1.1\r\nHost: shop.test\r\nConnection: close\r\n\r\n"
                    )
                    _responses(stream, 1)
        kept, dropped = episode_numbers[-LOG_EPISODES:], episode_numbers[:-LOG_EPISODES]
        assert [len(server.episode_log(number)) for number in dropped] == [0] * len(dropped)
        assert [len(server.episode_log(number)) for number in kept] == [2] * LOG_EPISODES
        assert [entry.episode_number for entry in server.log] == [number for number in kept for _ in range(2)]
        last = server.coverage(episode_numbers[-1])
        assert (last.requests, last.miss, last.matched_ratio) == (2, 1, 0.5)


def test_bad_requests_are_refused_not_crashed(handmade: DirectReplayServer) -> None:
    with socket.create_connection(("127.0.0.1", handmade.port)) as stream:
        stream.sendall(b"NONSENSE\r\n\r\n")
        assert stream.recv(1024).startswith(b"HTTP/1.1 400")
    with socket.create_connection(("127.0.0.1", handmade.port)) as stream:
        stream.sendall(b"POST / HTTP/1.1\r\nHost: shop.test\r\nTransfer-Encoding: chunked\r\n\r\n")
        assert stream.recv(1024).startswith(b"HTTP/1.1 411")


@pytest.fixture(scope="module")
def direct(recorded_snapshot: Path) -> Iterator[DirectReplayServer]:
    with DirectReplayServer(recorded_snapshot) as server:
        yield server


@pytest.fixture(scope="module")
def browser(direct: DirectReplayServer, web_playwright: Playwright) -> Iterator[Browser]:
    profile = replay_profile(direct)
    assert profile.proxy is None and not any(
        arg.startswith("--ignore-certificate-errors=") for arg in profile.args()
    )
    with launch_browser(web_playwright, profile) as launched:
        time.sleep(STARTUP_NOISE_S)
        yield launched


def _load(browser: Browser, direct: DirectReplayServer, url: str) -> tuple[str, str | None, int]:
    """(DOM, certificate issuer, status) of one load in a fresh context."""
    context = fresh_context(browser, replay_profile(direct))
    try:
        page = context.new_page()
        response = page.goto(url, wait_until="load")
        assert response is not None
        with suppress(PlaywrightError):
            page.wait_for_load_state("networkidle", timeout=SETTLE_MS)
        security = response.security_details() or {}
        return page.content(), security.get("issuer"), response.status
    finally:
        context.close()


@pytest.mark.e2e
def test_recorded_page_replays_directly_over_pinned_https_deterministically_and_offline(
    direct: DirectReplayServer, browser: Browser, local_web: LocalWeb
) -> None:
    before = local_web.connections
    hosts = set(direct.snapshot.manifest.hosts)
    home = "https://pizzapalace.test/"
    doms = set()
    for _ in range(3):
        episode_number = direct.new_episode()
        dom, issuer, status = _load(browser, direct, home)
        assert status == 200 and issuer == CA_NAME
        assert 'id="main"' in dom
        doms.add(hashlib.sha256(dom.encode()).hexdigest())
        coverage = Coverage.of(
            [
                entry
                for entry in direct.log
                if entry.episode_number == episode_number and urlsplit(entry.url).hostname in hosts
            ]
        )
        assert coverage.requests >= 3
        assert coverage.matched_ratio >= 0.99, coverage.misses
    assert len(doms) == 1
    assert local_web.connections == before, "direct replay reached the origin"


@pytest.mark.e2e
def test_a_miss_is_a_marked_404(direct: DirectReplayServer, browser: Browser) -> None:
    context = browser.new_context()
    try:
        response = context.new_page().goto("https://pizzapalace.test/never-recorded")
        assert response is not None and response.status == 404
        assert response.headers["x-susbench-replay"] == "miss"
    finally:
        context.close()
    # The browser's own background requests reach the same server, in any order: the page's entry is
    # found by its URL, not taken as the last one.
    (entry,) = [entry for entry in direct.log if entry.url == "https://pizzapalace.test/never-recorded"]
    assert entry.kind == "miss"
