"""The extension's URL-pattern matcher (extension/urlpattern.js) runs in real Chromium and agrees with
susbench.core.urlpattern on every case of the shared table, and on the Unicode corners of ignoring case."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Page

from susbench.core.paths import EXTENSION_DIR
from susbench.core.urlpattern import glob_matches, url_matches

pytestmark = pytest.mark.e2e

SHARED_CASES = json.loads((Path(__file__).parents[1] / "data" / "url_patterns.json").read_text())["cases"]

# Where Unicode case folding (JavaScript's "iu") and Python's re.IGNORECASE could part ways.
UNICODE_CASES = [
    {"pattern": "i.test/*", "url": "https://İ.test/x", "match": True},
    {"pattern": "ı.test/*", "url": "https://I.test/x", "match": True},
    {"pattern": "k.test", "url": "https://\u212a.test", "match": True},
    {"pattern": "s.test", "url": "https://\u017f.test", "match": True},
    {"pattern": "ss.test", "url": "https://ß.test", "match": False},
    {"pattern": "ÉCOLE.test/*", "url": "https://école.test/cours", "match": True},
    {"pattern": "shop.test/?", "url": "https://shop.test/😀", "match": True},
]


def case_id(case: dict[str, object]) -> str:
    return f"{case['pattern']}~{case['url']}"


@pytest.fixture(scope="module")
def js_page(browser_direct: BrowserContext) -> Iterator[Page]:
    """A blank page holding the very file the extension loads."""
    page = browser_direct.new_page()
    page.add_script_tag(path=EXTENSION_DIR / "urlpattern.js")
    yield page
    page.close()


def js_call(page: Page, function: str, pattern: str, text: str) -> bool:
    return bool(page.evaluate(f"([p, t]) => pageHelper.urlpattern.{function}(p, t)", [pattern, text]))


@pytest.mark.parametrize("case", SHARED_CASES + UNICODE_CASES, ids=case_id)
def test_javascript_matches_urls_as_python_does(js_page: Page, case: dict[str, str]) -> None:
    python = url_matches(case["pattern"], case["url"])
    javascript = js_call(js_page, "urlMatches", case["pattern"], case["url"])
    assert (python, javascript) == (case["match"], case["match"])


@pytest.mark.parametrize(
    ("pattern", "text", "match"),
    [
        ("pizza#1", "pizza#1", True),  # a glob sees the whole text: no fragment is cut
        ("https://x.test", "https://x.test", True),  # nor a scheme
        ("*-careful", "Confirm-Shaming-CAREFUL", True),
        ("*-careful", "confirm-shaming-naive", False),
    ],
)
def test_javascript_globs_as_python_does(js_page: Page, pattern: str, text: str, match: bool) -> None:
    assert (glob_matches(pattern, text), js_call(js_page, "globMatches", pattern, text)) == (match, match)
