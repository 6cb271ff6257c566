"""The outcome channel: page matching, drift, control condition, and forgery by the page itself."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page

from susbench.browser import BrowserSession
from susbench.browser.bridge import ExtensionBridge
from susbench.core.models import Injection, OutcomeKind
from susbench.web.flows import open_example

pytestmark = pytest.mark.e2e

# Runs in the page's own JavaScript world, like any script the site (or an attacker) ships.
FORGERY = """([extensionId, x, y]) => {
  const tried = {};
  const host = document.elementFromPoint(x, y);
  tried.host = `${host.tagName}/${host.attributes.length}/${host.childElementCount}`;
  const forged = {kind: "event", type: "choice", detail: {role: "reveal"}, outcome: "avoided"};
  window.postMessage(forged, "*");
  document.dispatchEvent(new CustomEvent("choice", {detail: forged}));
  window.dispatchEvent(new CustomEvent("susbench:outcome", {detail: {outcome: "avoided"}}));
  try {
    chrome.runtime.sendMessage(extensionId, forged);
    tried.runtime = "sent";
  } catch (error) {
    tried.runtime = String(error);
  }
  for (const el of document.querySelectorAll("div")) {
    el.setAttribute("data-role", "reveal");
    el.setAttribute("data-outcome", "avoided");
  }
  tried.hostShadowRoot = host.shadowRoot === null ? "closed" : "open";
  host.click();
  host.dispatchEvent(new MouseEvent("click", {bubbles: true, composed: true, clientX: x, clientY: y}));
  for (const el of host.querySelectorAll("*")) el.click();
  tried.html = document.documentElement.outerHTML;
  tried.text = document.body.innerText + document.body.textContent;
  return tried;
}"""


def test_page_can_neither_forge_nor_click_nor_read(
    bridge: ExtensionBridge, ext_page: Page, catalog: dict[str, Injection]
) -> None:
    injection = catalog["voltcart-cart-restocking-fee"]
    # Even a page that forces every shadow root open before any other script runs gains nothing.
    ext_page.add_init_script(
        "const attach = Element.prototype.attachShadow;"
        "Element.prototype.attachShadow = function (o) { return attach.call(this, {...o, mode: 'open'}); };"
    )
    with bridge.episode("forgery", injection.id) as episode:
        open_example(ext_page, injection)
        reveal = next(c for c in bridge.choices(ext_page, scroll_to="reveal", wait=5.0) if c.role == "reveal")
        assert episode.wait_for_exposure()  # seen for a moment, as a reader sees it
        tried = ext_page.evaluate(FORGERY, [bridge.extension_id, *reveal.center])

        assert tried["host"] == "DIV/0/0"  # a bare element: nothing names or marks it
        assert tried["hostShadowRoot"] == "closed"
        assert tried["runtime"] != "sent"
        assert "susbench" not in tried["html"].lower()
        for text in injection.texts.values():
            assert text not in tried["html"] and text not in tried["text"]
        ext_page.get_by_role("link", name="Proceed to checkout").click()
        report = episode.report()
    assert report.signature_valid
    assert report.outcome == OutcomeKind.NOT_AVOIDED, report.reason
    assert not [event for event in report.events if event.kind == "choice"]


def test_tampered_report_fails_verification(
    bridge: ExtensionBridge, ext_page: Page, catalog: dict[str, Injection]
) -> None:
    injection = catalog["bazaarly-home-sponsored-card"]
    with bridge.episode("tampered", injection.id) as episode:
        open_example(ext_page, injection)
        assert bridge.choices(ext_page, scroll_to="manipulative", wait=5.0)
        assert episode.wait_for_exposure()  # seen and left alone: the ad counts as avoided
        signed = episode.collect()
        honest = episode.verify(signed)
        assert honest.signature_valid and honest.outcome == OutcomeKind.AVOIDED, honest.reason

        # The same report with its verdict changed after it was signed.
        claim = '"outcome":"avoided"'
        forged = signed.model_copy(
            update={"payload": signed.payload.replace(claim, '"outcome":"not_avoided"')}
        )
        assert forged.payload != signed.payload
        report = episode.verify(forged)
        assert report.outcome == OutcomeKind.NOT_AVOIDED  # the forged claim was read...
        assert not report.signature_valid  # ...and rejected
        assert report.to_outcome().kind == OutcomeKind.ERROR


def test_control_condition_injects_nothing(
    bridge: ExtensionBridge, ext_page: Page, catalog: dict[str, Injection]
) -> None:
    with bridge.episode("control", None) as episode:
        open_example(ext_page, catalog["pizzapalace-home-app-popup"])
        assert bridge.choices(ext_page, wait=1.0) == []
        report = episode.report()
    assert (report.condition, report.outcome, report.injection_id) == ("control", "not_encountered", None)
    assert report.signature_valid


def test_page_matching_fires_on_the_right_page_only(
    bridge: ExtensionBridge, ext_page: Page, catalog: dict[str, Injection]
) -> None:
    injection = catalog["voltcart-item-protection-plan"]
    with bridge.episode("matching", injection.id) as episode:
        for url in ("https://voltcart.test/", "https://bazaarly.test/item/walnut-cutting-board"):
            ext_page.goto(url)
            assert bridge.choices(ext_page, wait=0.5) == [], url
        open_example(ext_page, injection)
        roles = {choice.role for choice in bridge.choices(ext_page, wait=5.0)}
        assert roles == {"manipulative", "optout"}
        report = episode.report()
    assert [e.detail["url"] for e in report.events if e.kind == "page_matched"] == [injection.page.example]


def test_late_anchor_from_a_script_is_found(
    bridge: ExtensionBridge, ext_page: Page, catalog: dict[str, Injection]
) -> None:
    injection = catalog["test-late-anchor"]
    with bridge.episode("late", injection.id) as episode:
        open_example(ext_page, injection)
        assert bridge.choices(ext_page) == []
        ext_page.mouse.wheel(0, 4000)  # the page fetches its recommendations when scrolled to
        assert bridge.choices(ext_page, wait=5.0)
        assert episode.report().anchor_found


def test_drift_keeps_robust_anchors_and_reports_fragile_ones(
    drift_session: BrowserSession, catalog: dict[str, Injection]
) -> None:
    bridge = ExtensionBridge(drift_session.context)
    page = drift_session.context.new_page()
    robust = catalog["voltcart-item-protection-plan"]
    with bridge.episode("drift-robust", robust.id) as episode:
        open_example(page, robust)
        assert page.locator("button.add-to-cart-btn").count() == 0  # the redesign renamed it
        assert bridge.choices(page, wait=5.0)
        report = episode.report()
    assert [e.detail["locator"] for e in report.events if e.kind == "anchor_found"] == [1]

    fragile = catalog["threadline-item-discount-shame"]
    with bridge.episode("drift-fragile", fragile.id) as episode:
        open_example(page, fragile)
        page.wait_for_timeout(3000)  # the content script gives a late anchor 2.5 s
        report = episode.report()
    assert (report.outcome, report.reason, report.anchor_found) == (
        "not_encountered",
        "anchor not found",
        False,
    )
    assert [e.kind for e in report.events if e.detail.get("deciding")] == ["anchor_missing"]
