"""HAR import (`susbench snapshot import x.har`): a HAR that Playwright records on the local web becomes
a snapshot whose records hold the HAR's bodies under its URLs, and that snapshot replays its pages in
Chromium; a HAR that is not one is refused naming the file and field.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest
from playwright.sync_api import Playwright
from typer.testing import CliRunner

from susbench.browser import fresh_context, launch_browser, replay_profile, routed_profile
from susbench.browser.launch import context_options
from susbench.cli.main import app
from susbench.core.errors import SnapshotError
from susbench.replayer.factory import replay_server
from susbench.snapshot import Snapshot, import_warc, verify_snapshot
from susbench.web import LocalWeb
from tests.support.wacz_tools import WaczTools

SVG = "image/svg+xml"
PAGES = ("https://voltcart.test/", "https://voltcart.test/item/aero-14-laptop")


@pytest.fixture
def recorded_har(tmp_path: Path, local_web: LocalWeb, web_playwright: Playwright) -> Path:
    """What Playwright's own HAR recorder (bodies embedded) wrote while visiting two local pages."""
    har = tmp_path / "voltcart.har"
    profile = routed_profile(local_web)
    with launch_browser(web_playwright, profile) as browser:
        context = browser.new_context(
            **context_options(profile), record_har_path=har, record_har_content="embed"
        )
        for url in PAGES:  # a page each, left open: a page navigated away loses its bodies to the HAR
            context.new_page().goto(url, wait_until="networkidle")
        context.close()  # the HAR is written when its context closes
    return har


def _bodies(har: Path) -> dict[str, bytes]:
    """Each URL's body as the HAR holds it (the last one for a URL fetched twice)."""
    bodies: dict[str, bytes] = {}
    for entry in json.loads(har.read_text(encoding="utf-8"))["log"]["entries"]:
        content = entry["response"]["content"]
        if entry["response"]["status"] == 200 and "text" in content:
            text = content["text"]
            bodies[entry["request"]["url"]] = (
                base64.b64decode(text) if content.get("encoding") == "base64" else text.encode("utf-8")
            )
    return bodies


@pytest.mark.e2e
def test_a_playwright_har_becomes_a_snapshot_that_replays(
    recorded_har: Path, tmp_path: Path, web_playwright: Playwright
) -> None:
    out = tmp_path / "from-har.wacz"
    result = CliRunner().invoke(app, ["snapshot", "import", str(recorded_har), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert verify_snapshot(out).ok
    bodies = _bodies(recorded_har)
    assert set(PAGES) <= set(bodies) and len(bodies) > len(PAGES)  # the pages and what they loaded
    with Snapshot.open(out) as snapshot:
        by_url = {entry.url: entry for entry in snapshot.entries()}
        for url, body in bodies.items():
            response = snapshot.read_response(by_url[url])
            assert response.body == body, url
            assert response.header("Content-Encoding") is None
        assert {page.url for page in snapshot.manifest.pages} >= set(PAGES)
    with (
        replay_server(out, "direct") as server,
        launch_browser(web_playwright, replay_profile(server)) as browser,
    ):
        page = fresh_context(browser, replay_profile(server)).new_page()
        page.goto(PAGES[1])
        assert "Aero 14" in page.title()


def test_a_har_that_is_not_one_names_the_file_and_field(tmp_path: Path) -> None:
    broken = tmp_path / "broken.har"
    broken.write_text("{not json", encoding="utf-8")
    with pytest.raises(SnapshotError, match=r"broken.har: not a HAR file \(JSON\)"):
        import_warc([broken], tmp_path / "x.wacz")
    empty = tmp_path / "empty.har"
    empty.write_text(json.dumps({"log": {"entries": [{"request": {}}]}}), encoding="utf-8")
    with pytest.raises(SnapshotError, match=r"empty.har: not a HAR file: log.entries.0"):
        import_warc([empty], tmp_path / "x.wacz")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "susbench",
            "snapshot",
            "import",
            str(empty),
            "--out",
            str(tmp_path / "x.wacz"),
        ],
        capture_output=True,
        text=True,
    )
    said = done.stdout + done.stderr
    assert done.returncode != 0 and "empty.har" in said and "not a HAR file" in said, said
    assert "Traceback" not in said, said


def _entry(
    url: str, content: dict[str, object], headers: list[dict[str, str]], status: int = 200
) -> dict[str, object]:
    return {
        "startedDateTime": "2026-12-01T10:00:00Z",
        "request": {"method": "GET", "url": url, "headers": []},
        "response": {"status": status, "statusText": "", "headers": headers, "content": content},
    }


def test_an_entry_without_its_body_is_left_out_not_stored_empty(tmp_path: Path) -> None:
    """Chromium's own favicon request may be recorded with no text, a size of 0 or -1 and perhaps a
    Content-Length, Firefox's unsaved bodies with neither text nor size: the body is unknown, so the
    entry that kept it is the one replayed; a body the HAR says is empty stays; a 304 that kept the
    cached body replays as a 200 (the replaying browser has no cache)."""
    icon = '<svg xmlns="http://www.w3.org/2000/svg"/>'
    page = "<html><head><title>T</title></head><body>t</body></html>"
    length = [{"name": "Content-Length", "value": str(len(icon))}]
    har = tmp_path / "site.har"
    entries = [
        _entry("https://site.test/", {"size": len(page), "mimeType": "text/html", "text": page}, []),
        _entry(
            "https://site.test/favicon.svg",
            {"size": len(icon), "mimeType": SVG, "text": icon},
            length,
        ),
        _entry("https://site.test/favicon.svg", {"size": 0, "mimeType": SVG}, length),
        _entry("https://site.test/favicon.svg", {"size": -1, "mimeType": SVG}, []),
        _entry("https://site.test/empty", {"size": 0, "mimeType": "text/plain"}, []),
        _entry("https://site.test/unsaved.png", {"mimeType": "image/png"}, []),  # Firefox: no text, no size
        _entry(
            "https://site.test/cached.js", {"size": 2, "mimeType": "text/javascript", "text": "1;"}, [], 304
        ),
    ]
    har.write_text(json.dumps({"log": {"entries": entries}}), encoding="utf-8")
    out = tmp_path / "site.wacz"
    result = CliRunner().invoke(app, ["snapshot", "import", str(har), "--out", str(out)])
    assert result.exit_code == 0, result.output
    with Snapshot.open(out) as snapshot:
        records = [entry for entry in snapshot.entries() if entry.url == "https://site.test/favicon.svg"]
        assert [snapshot.read_response(entry).body for entry in records] == [icon.encode()]
        (empty,) = [entry for entry in snapshot.entries() if entry.url == "https://site.test/empty"]
        assert snapshot.read_response(empty).body == b""
        assert "https://site.test/unsaved.png" not in {entry.url for entry in snapshot.entries()}
        (cached,) = [entry for entry in snapshot.entries() if entry.url == "https://site.test/cached.js"]
        assert (snapshot.read_response(cached).status, snapshot.read_response(cached).body) == (200, b"1;")


def test_a_firefox_har_imports_with_its_bodies_and_without_the_ones_it_did_not_save(
    realdata: Path, tmp_path: Path, wacz_tools: WaczTools
) -> None:
    """Firefox 111's own "Save All As HAR" of mitmproxy.org (../shared/realdata/har, tests/data/har/
    README.md): 304s that kept the cached body, gzip-declared bodies stored decoded, a base64 favicon,
    and five images saved with neither text nor size, which are unknown, not empty; py-wacz accepts
    the WACZ."""
    har = realdata / "har" / "firefox.har"
    if not har.is_file():
        pytest.skip(f"{har} is absent: shared data, not in the repository (tests/data/har/README.md)")
    log = json.loads(har.read_bytes())["log"]
    assert log["creator"]["name"] == "Firefox"
    kept = {
        entry["request"]["url"]: entry for entry in log["entries"] if "text" in entry["response"]["content"]
    }
    out = tmp_path / "firefox.wacz"
    result = CliRunner().invoke(app, ["snapshot", "import", str(har), "--out", str(out)])
    assert result.exit_code == 0, result.output
    left_out = len(log["entries"]) - len(kept)
    said = " ".join(result.output.split())  # the console wraps long lines
    assert left_out == 5 and f"{left_out} entries without their response body left out" in said
    assert verify_snapshot(out).ok
    validated = wacz_tools.validate(out)
    assert validated.returncode == 0 and "Validation succeeded" in validated.stdout, validated.stdout
    with Snapshot.open(out) as snapshot:
        by_url = {entry.url: entry for entry in snapshot.entries()}
        assert set(by_url) == set(kept)
        for url, entry in kept.items():
            content = entry["response"]["content"]
            body = (
                base64.b64decode(content["text"])
                if content.get("encoding") == "base64"
                else content["text"].encode("utf-8")
            )
            response = snapshot.read_response(by_url[url])
            assert response.body == body and len(body) == content["size"], url
            status = entry["response"]["status"]
            assert response.status == (200 if status == 304 else status), url
            assert response.header("Content-Encoding") is None, url
        html = [url for url, entry in kept.items() if entry["response"]["content"]["mimeType"] == "text/html"]
        assert [page.url for page in snapshot.manifest.pages] == html
        assert html[0] == "https://mitmproxy.org/"


def test_a_har_body_in_an_encoding_other_than_base64_names_the_field(tmp_path: Path) -> None:
    har = tmp_path / "odd.har"
    content = {"size": 2, "mimeType": "text/plain", "text": "hi", "encoding": "quoted-printable"}
    har.write_text(json.dumps({"log": {"entries": [_entry("https://site.test/", content, [])]}}), "utf-8")
    with pytest.raises(SnapshotError, match=r"odd.har: log.entries.0.response.content.encoding: 'quoted"):
        import_warc([har], tmp_path / "odd.wacz")
