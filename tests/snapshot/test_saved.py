"""Saved HTML pages imported with a URL map: WARC records under their original URLs, replayed there."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from playwright.sync_api import Playwright
from typer.testing import CliRunner

from susbench.browser import fresh_context, launch_browser, replay_profile
from susbench.cli.main import app
from susbench.core.errors import InputError
from susbench.replayer.factory import replay_server
from susbench.snapshot import Snapshot, import_warc, verify_snapshot
from susbench.snapshot.saved import load_url_map, pages_for

SHOE = "<!doctype html><html><head><title>Trail shoe</title></head><body><h1>Trail shoe</h1>€89</body></html>"
# Latin-1 bytes with the page's own charset: left to the page's <meta>, as a browser opening the file.
MUG = '<html><head><meta charset="iso-8859-1"><title>Mug \xe0 caf\xe9</title></head><body>Tasse</body></html>'


@pytest.fixture
def saved(tmp_path: Path) -> Path:
    folder = tmp_path / "pages"
    folder.mkdir()
    (folder / "shoe.html.gz").write_bytes(gzip.compress(SHOE.encode("utf-8")))
    (folder / "mug.html").write_bytes(MUG.encode("latin-1"))
    url_map = {
        "shoe": {"url": "https://shop.example/p/shoe#colour=red", "captured_at": "2021-02-03T10:56:56Z"},
        "mug.html": "http://laden.example/artikel/tasse?id=7",
    }
    (folder / "urls.json").write_text(json.dumps(url_map), encoding="utf-8")
    return folder


def test_saved_pages_become_records_under_their_original_urls(saved: Path, tmp_path: Path) -> None:
    out = import_warc([], tmp_path / "saved.wacz", saved=load_url_map(saved / "urls.json"))
    assert verify_snapshot(out).ok
    with Snapshot.open(out) as snapshot:
        by_url = {entry.url: entry for entry in snapshot.entries()}
        assert set(by_url) == {"https://shop.example/p/shoe", "http://laden.example/artikel/tasse?id=7"}
        shoe = snapshot.read_response(by_url["https://shop.example/p/shoe"])
        assert shoe.body == SHOE.encode("utf-8") and shoe.status == 200
        assert dict(shoe.headers)["Content-Type"] == "text/html; charset=utf-8"
        mug = snapshot.read_response(by_url["http://laden.example/artikel/tasse?id=7"])
        assert mug.body == MUG.encode("latin-1") and dict(mug.headers)["Content-Type"] == "text/html"
        assert [page.url for page in snapshot.manifest.pages] == [  # in the map's order
            "https://shop.example/p/shoe",
            "http://laden.example/artikel/tasse?id=7",
        ]
        assert snapshot.manifest.pages[0].captured_at.isoformat() == "2021-02-03T10:56:56+00:00"


@pytest.mark.e2e
def test_a_saved_page_replays_at_its_url_in_chromium(
    saved: Path, tmp_path: Path, web_playwright: Playwright
) -> None:
    out = import_warc([], tmp_path / "saved.wacz", saved=load_url_map(saved / "urls.json"))
    with (
        replay_server(out, "direct") as server,
        launch_browser(web_playwright, replay_profile(server)) as browser,
    ):
        page = fresh_context(browser, replay_profile(server)).new_page()
        page.goto("https://shop.example/p/shoe#colour=red")
        assert page.title() == "Trail shoe"
        page.goto("http://laden.example/artikel/tasse?id=7")
        assert page.title() == "Mug à café"  # decoded by the page's own charset


def test_the_cli_imports_saved_pages_beside_warcs(saved: Path, tmp_path: Path, realdata: Path) -> None:
    out = tmp_path / "both.wacz"
    books = realdata / "warc" / "books.toscrape.warc"
    result = CliRunner().invoke(
        app,
        [
            "snapshot",
            "import",
            str(books),
            str(saved / "mug.html"),
            "--url-map",
            str(saved / "urls.json"),
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    with Snapshot.open(out) as snapshot:
        urls = {entry.url for entry in snapshot.entries()}
    assert "http://laden.example/artikel/tasse?id=7" in urls and "https://shop.example/p/shoe" not in urls
    assert "http://books.toscrape.com/" in urls


def test_url_map_problems_name_the_file_and_entry(saved: Path) -> None:
    with pytest.raises(InputError, match=r"--url-map"):
        pages_for([saved / "mug.html"], None)
    (saved / "stray.html").write_text("<p>stray</p>")
    with pytest.raises(InputError, match=r"stray.html: not in the URL map .*urls.json"):
        pages_for([saved / "stray.html"], saved / "urls.json")
    (saved / "gone.json").write_text(json.dumps({"gone.html": "https://shop.example/gone"}))
    with pytest.raises(InputError, match=r"gone.json: entry 'gone.html': no saved page"):
        load_url_map(saved / "gone.json")
    (saved / "bad.json").write_text(json.dumps({"mug.html": "ftp://shop.example/mug"}))
    with pytest.raises(InputError, match=r"bad.json: URL map.*mug.html.*expected an http\(s\) URL"):
        load_url_map(saved / "bad.json")
    result = CliRunner().invoke(
        app, ["snapshot", "import", "--url-map", str(saved / "bad.json"), "--out", "x.wacz"]
    )
    assert result.exit_code != 0 and "Traceback" not in result.output and "pydantic" not in result.output
