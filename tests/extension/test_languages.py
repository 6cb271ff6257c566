"""Generic injections speak the page's language: the catalog has every generic text in every
language of the real pages (and the required ones), the content script tells the language by the
page's lang attribute or else by its text, and a page in a language the catalog lacks gets no
generic injection, with the reason in the episode."""

from __future__ import annotations

import gzip
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, Playwright, Route

from susbench.browser import BrowserProfile, LocalBackend, replay_profile
from susbench.browser.bridge import ExtensionBridge
from susbench.catalog.injections import GENERIC_DIR, catalog_languages, load_injections
from susbench.catalog.languages import load_languages, store_languages
from susbench.catalog.tasks import load_tasks
from susbench.catalog.tasksets import TASK_SETS, build_realpages_snapshot
from susbench.core.errors import InputError
from susbench.core.models import Injection
from susbench.core.paths import EXTENSION_DIR
from susbench.replayer.factory import replay_server

REQUIRED = {"en", "de", "fr", "es", "it", "nl", "pl", "pt", "ro", "ru", "sv", "tr", "ja"}
# The languages of the real pages in ../shared/realdata, by what their sites are written in (the
# lang attribute is missing on some: those are told by their text). zh-TW pages are Traditional.
REALDATA_LANGUAGES = {
    *("en", "de", "fr", "es", "it", "pt", "pt-BR", "ru", "pl"),
    *("lv", "sk", "he", "ar", "ko", "zh-Hant"),
}
# Each realpages task's shop, by the language its pages are written in (not by their markup).
TASK_LANGUAGES = {
    "almedina-labour-code-basket": "pt",
    "amazon-com-bird-feeder-basket": "en",
    "amazon-com-go-to-basket": "en",
    "bestseller-cardigan-bag": "en",
    "books-toscrape-attic-basket": "en",
    "currys-selfie-stick-basket": "en",
    "eduscho-laundry-shelf-basket": "de",
    "elkor-monnalisa-bag-basket": "lv",
    "elkor-socks-basket": "lv",
    "mobly-bed-go-to-cart": "pt-BR",
    "mobly-stools-go-to-cart": "pt-BR",
    "nay-usb-cable-basket": "sk",
    "olx-alto-chat": "en",
    "olx-infinix-chat": "en",
    "otto-whisky-glasses-basket": "de",
    "spartoo-sneakers-basket": "pt",
}
# Saved product pages whose text alone must name their language (lang attribute taken away), by
# site and the language the site is written in.
CONTENT_CASES = {
    "www.otto.de": "de",
    "www.kiabi.com": "fr",
    "www.mobly.com.br": "pt-BR",
    "ar-sa.namshi.com": "ar",
    "www.spartoo.pt": "pt",
    "www.stockcenter.com.ar": "es",
    "www.amazon.it": "it",
    "www.leroymerlin.pl": "pl",
    "www.nay.sk": "sk",
    "www.elkor.lv": "lv",
    "www.mechta.kz": "ru",
    "www.getit.co.il": "he",
    "www.tmon.co.kr": "ko",
    "i3fresh.tw": "zh-Hant",
    "www.currys.ie": "en",
}
SAVED = "http://saved-page.invalid/page"
DECLARED_META = re.compile(r"<meta\b[^>]*(?:og:locale|content-language)[^>]*>", re.I)
LANG_ATTRIBUTE = re.compile(r"(<html\b[^>]*?)\s(?:xml:)?lang\s*=\s*[\"']?[^\"' >]*[\"']?", re.I)
SETTLE_S = 8.0
LOAD_MS = 120_000  # a heavy real page, replayed on a busy machine


def generic() -> list[Injection]:
    return load_injections([GENERIC_DIR])


def test_every_generic_text_exists_in_every_required_and_real_page_language() -> None:
    languages = catalog_languages()
    assert REQUIRED | REALDATA_LANGUAGES | set(TASK_LANGUAGES.values()) <= set(languages)
    store = store_languages(languages, generic())
    for tag, entry in store.items():
        texts = entry["texts"]  # type: ignore[index]
        for injection in generic():
            assert set(texts[injection.id]) == set(injection.texts), (tag, injection.id)
            if tag != "en":  # a translation, not the English copied over
                assert texts[injection.id] != injection.texts, (tag, injection.id)


def test_a_translation_missing_a_text_is_an_error_naming_file_and_field(tmp_path: Path) -> None:
    source = (GENERIC_DIR.parent / "languages" / "de.yaml").read_text(encoding="utf-8")
    (tmp_path / "en.yaml").write_text((GENERIC_DIR.parent / "languages" / "en.yaml").read_text("utf-8"))
    (tmp_path / "de.yaml").write_text(source.replace("    close: Schließen\n", "", 1), encoding="utf-8")
    with pytest.raises(InputError) as raised:
        load_languages(generic(), tmp_path)
    assert "de.yaml: field 'texts.generic-app-discount-popup': expected the keys" in str(raised.value)


def saved_pages(realdata: Path) -> dict[str, str]:
    """One saved product page's HTML per site of CONTENT_CASES, with no lang attribute or meta tag."""
    folder = realdata / "product-pages"
    truths = json.loads((folder / "ground-truth.json").read_text(encoding="utf-8"))
    found: dict[str, str] = {}
    for stem, truth in sorted(truths.items()):
        host = truth["url"].split("/")[2]
        if host in CONTENT_CASES and host not in found:
            html = gzip.decompress((folder / f"{stem}.html.gz").read_bytes()).decode("utf-8", "replace")
            found[host] = DECLARED_META.sub("", LANG_ATTRIBUTE.sub(r"\1", html))
    assert set(found) == set(CONTENT_CASES)
    return found


def serve(page: Page, html: str) -> None:
    """Answer SAVED with `html`; every other request (the page's images, scripts) is aborted."""

    def answer(route: Route) -> None:
        if route.request.url == SAVED:
            route.fulfill(body=html, content_type="text/html; charset=utf-8")
        else:
            route.abort()

    page.route("**/*", answer)


@pytest.mark.e2e
def test_the_page_text_names_its_language_when_the_page_declares_none(
    realdata: Path, web_playwright: Playwright
) -> None:
    languages = store_languages(catalog_languages(), generic())
    script = "globalThis.pageHelper = {};\n" + (EXTENSION_DIR / "content" / "language.js").read_text("utf-8")
    told = {}
    with LocalBackend(web_playwright).launch(BrowserProfile()) as session:
        for host, html in saved_pages(realdata).items():
            page = session.context.new_page()
            serve(page, html)
            page.goto(SAVED, wait_until="domcontentloaded")
            page.add_script_tag(content=script)
            told[host] = page.evaluate("(languages) => pageHelper.language.detect(languages)", languages)
            page.close()
    assert {host: found["language"] for host, found in told.items()} == CONTENT_CASES
    assert {found["by"] for found in told.values()} == {"content"}


@pytest.fixture(scope="module")
def realpages_session(web_playwright: Playwright, extension_dir: Path, realdata: Path) -> Iterator[tuple]:
    with replay_server(build_realpages_snapshot(realdata), "direct") as server:
        profile = replay_profile(server).model_copy(update={"extension_dir": extension_dir})
        with LocalBackend(web_playwright).launch(profile) as session:
            yield server, session


@pytest.mark.e2e
def test_generic_injections_speak_the_language_of_every_realpages_shop(
    realpages_session: tuple, catalog: dict[str, Injection]
) -> None:
    server, session = realpages_session
    bridge = ExtensionBridge(session.context)
    languages = store_languages(catalog_languages(), generic())
    tasks = load_tasks(TASK_SETS["realpages"].tasks_dir, catalog)
    assert {task.id for task in tasks} == set(TASK_LANGUAGES)
    for task in tasks:
        expected = TASK_LANGUAGES[task.id]
        for injection_id in task.injections[:1]:
            texts = languages[expected]["texts"][injection_id]  # type: ignore[index]
            server.new_episode()
            page = session.context.new_page()
            with bridge.episode(f"language-{task.id}-{injection_id}", injection_id) as episode:
                page.goto(task.start_url, wait_until="domcontentloaded", timeout=LOAD_MS)
                choices = bridge.choices(page, wait=SETTLE_S)
                page.close()
                report = episode.report()
            injected = [event.detail for event in report.events if event.kind == "injected"]
            assert injected and injected[0]["language"] == expected, (task.id, injection_id, report.reason)
            assert choices, (task.id, injection_id)
            for choice in choices:  # every control the subject reads is in the page's language
                spoken = [text for text in texts.values() if text in choice.label or choice.label in text]
                assert spoken, (task.id, choice.label)


def events(bridge: ExtensionBridge) -> int:
    return int(bridge.worker().evaluate("() => self.bridge.status()")["events"])


@pytest.mark.e2e
def test_a_page_in_a_language_the_catalog_lacks_gets_no_generic_injection_and_says_why(
    web_playwright: Playwright, extension_dir: Path
) -> None:
    html = (
        '<!doctype html><html lang="fi"><meta charset="utf-8"><title>Kauppa</title><body><main>'
        "<h1>Villasukat, harmaa</h1><p class=price>12,90 €</p><button>Lisää ostoskoriin</button>"
        "<p>Ilmainen toimitus yli 50 euron tilauksiin. Palautus 30 päivän sisällä.</p></main></body></html>"
    )
    with LocalBackend(web_playwright).launch(BrowserProfile(extension_dir=extension_dir)) as session:
        bridge = ExtensionBridge(session.context)
        page = session.context.new_page()
        serve(page, html)
        with bridge.episode("language-fi", "generic-buybox-discount-shame") as episode:
            page.goto(SAVED, wait_until="domcontentloaded")
            deadline = time.monotonic() + SETTLE_S  # episode_start, page_matched and then the verdict
            while events(bridge) < 3 and time.monotonic() < deadline:
                time.sleep(0.05)
            assert bridge.choices(page) == []
            report = episode.report()
    kinds = [event.kind for event in report.events]
    assert "language_missing" in kinds and "injected" not in kinds, kinds
    assert report.outcome == "not_encountered"
    assert "language (fi, by its lang attribute) has no texts" in report.reason
