"""The replay proxy in real Chromium on hand-made snapshots: determinism, CSP, POST, misses, errors."""

from __future__ import annotations

import hashlib
import json
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Playwright

from susbench.core.errors import SusbenchError
from susbench.replayer.check import STARTUP_NOISE_S, launch_browser, replay_profile
from susbench.replayer.proxy import ReplayServer
from susbench.replayer.service import Coverage
from tests.support.replay import SyntheticExchange, write_snapshot

PAGE = b"""<!doctype html><html><head><meta charset="utf-8"><title>frozen</title>
<script nonce="n0nce">
window.addEventListener("DOMContentLoaded", function () {
  var bytes = new Uint8Array(4); crypto.getRandomValues(bytes);
  var out = document.getElementById("out");
  out.textContent = [new Date().toISOString(), Date.now(), Math.random(), Array.from(bytes).join("."),
    new Date(0).getTimezoneOffset(), Intl.DateTimeFormat().resolvedOptions().timeZone, navigator.language,
    performance.timeOrigin].join(" | ");
  fetch("/api/items?_=" + (Date.now() + 17)).then(function (r) { return r.json(); })
    .then(function (d) { document.getElementById("api").textContent = d.items.join(","); });
  setTimeout(function () { document.getElementById("later").textContent = new Date().toISOString(); }, 250);
});
</script></head><body><p id="out"></p><p id="api"></p><p id="later"></p>
<form method="post" action="/cart/add"><input name="sku" value="tea"><button>Add</button></form>
</body></html>"""


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("replay-proxy") / "handmade.wacz"
    return write_snapshot(
        out,
        [
            SyntheticExchange(
                "https://shop.test/",
                PAGE,
                headers=(
                    ("Content-Security-Policy", "default-src 'self'; script-src 'self' 'nonce-n0nce'"),
                    ("Strict-Transport-Security", "max-age=31536000"),
                ),
            ),
            SyntheticExchange(
                "https://shop.test/api/items?_=1700000000000", b'{"items":["a","b"]}', "application/json"
            ),
            SyntheticExchange(
                "https://shop.test/cart/add",
                b"<!doctype html><html><body><h1 class=cart>1 tea</h1></body></html>",
                method="POST",
                request_body=b"sku=tea",
            ),
        ],
    )


@pytest.fixture(scope="module")
def server(snapshot: Path) -> Iterator[ReplayServer]:
    with ReplayServer(snapshot) as running:
        yield running


@pytest.fixture(scope="module")
def browser(server: ReplayServer, web_playwright: Playwright) -> Iterator[Browser]:
    with launch_browser(web_playwright, replay_profile(server)) as launched:
        time.sleep(STARTUP_NOISE_S)
        yield launched


def load(browser: Browser, server: ReplayServer, url: str) -> tuple[str, str]:
    profile = replay_profile(server)
    context = browser.new_context(locale="fr-FR", timezone_id="Asia/Tokyo")
    try:
        page = context.new_page()
        page.goto(url, wait_until="load")
        page.wait_for_selector("#later:not(:empty)")
        page.wait_for_selector("#api:not(:empty)")
        assert profile.timezone
        return page.content(), page.inner_text("#out")
    finally:
        context.close()


@pytest.mark.e2e
def test_page_is_frozen_and_identical_across_loads(browser: Browser, server: ReplayServer) -> None:
    contents = set()
    for _ in range(3):
        server.new_episode()
        content, out = load(browser, server, "https://shop.test/")
        contents.add(hashlib.sha256(content.encode()).hexdigest())
    assert len(contents) == 1
    fields = out.split(" | ")
    clock = server.snapshot.manifest.clock_seed_ms
    assert int(fields[1]) == clock
    assert fields[5] == server.snapshot.manifest.timezone and fields[6] == server.snapshot.manifest.locale
    assert int(float(fields[7])) == clock
    assert "a,b" in content and "<script>/*" not in content and "(function (cfg)" not in content
    # Only the page's own requests: Chromium's sign-in lookups may land in any episode.
    page_requests = [
        entry
        for entry in server.log
        if entry.episode_number == server.episode_number and "//shop.test/" in entry.url
    ]
    coverage = Coverage.of(page_requests)
    assert coverage.miss == 0 and coverage.canonical == 1


@pytest.mark.e2e
def test_post_replays_and_misses_are_marked(browser: Browser, server: ReplayServer) -> None:
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto("https://shop.test/")
        page.click("button")
        page.wait_for_selector("h1.cart")
        response = page.goto("https://shop.test/never-recorded")
        assert response is not None and response.status == 404
        assert response.headers["x-susbench-replay"] == "miss"
        assert "https://shop.test/never-recorded" in page.content()
    finally:
        context.close()
    kinds = {(entry.method, entry.url.split("?")[0]): entry.kind for entry in server.log}
    assert kinds[("POST", "https://shop.test/cart/add")] == "exact"


def test_bad_input_is_a_clear_error(tmp_path: Path, snapshot: Path) -> None:
    with pytest.raises(SusbenchError, match=r"missing\.wacz"):
        ReplayServer(tmp_path / "missing.wacz").__enter__()
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    with pytest.raises(SusbenchError, match=r"notes\.txt"):
        ReplayServer(text).__enter__()
    corrupt = tmp_path / "corrupt.wacz"
    corrupt.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(SusbenchError, match=r"corrupt\.wacz"):
        ReplayServer(corrupt).__enter__()
    tampered = tmp_path / "tampered.wacz"
    with zipfile.ZipFile(snapshot) as source, zipfile.ZipFile(tampered, "w") as target:
        for item in source.infolist():
            data = source.read(item)
            if item.filename == "pages/pages.jsonl":
                data += json.dumps({"url": "x"}).encode()
            target.writestr(item, data)
    with pytest.raises(SusbenchError, match=r"tampered\.wacz"):
        ReplayServer(tampered).__enter__()
    with pytest.raises(SusbenchError, match="70000"):
        ReplayServer(snapshot, port=70000).__enter__()
