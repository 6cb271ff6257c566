"""Observations leave no trace the page can see, show the injected pattern as a person perceives it
(closed shadow root and all) without our internal names, and actions arrive as trusted input."""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import Page

from susbench.agents.actions import ActionRefused, Click, Press, Scroll, SwitchTab, TypeText
from susbench.agents.execute import Executor
from susbench.agents.observe import Observer
from susbench.agents.window import BrowserWindow
from susbench.browser.bridge import ExtensionBridge

pytestmark = pytest.mark.e2e

# A page script as a hostile site would run it: every mutation of the DOM, every event type the
# window and the document offer, recorded in capture phase.
WATCHER = """() => {
  const seen = [];
  window.__seen = seen;
  new MutationObserver((records) => records.forEach((r) =>
      seen.push(`mutation ${r.type} ${r.attributeName || ''} on ${r.target.nodeName}`)))
    .observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
  const names = new Set();
  for (const target of [window, document])
    for (const key in target) if (key.startsWith('on')) names.add(key.slice(2));
  for (const name of names) for (const target of [window, document])
    target.addEventListener(name, (event) => seen.push(`event ${event.type}`), true);
  return names.size;
}"""
QUIET_S = 1.0
INTERNAL_NAMES = ("data-role", "data-part", "data-dismiss", "data-emphasis", "class=")


def watched_page(bridge: ExtensionBridge, page: Page, url: str) -> list[str]:
    """Open the page of the running episode, watched by a script that notes every sensor read."""
    page.goto(url, wait_until="load")
    labels = [choice.label for choice in bridge.choices(page, wait=5.0) if choice.label]
    assert labels, "the pattern was injected"
    assert page.evaluate(WATCHER) > 50
    time.sleep(QUIET_S)
    page.evaluate("window.__seen.length = 0")  # sensors fire once when a listener is added
    time.sleep(QUIET_S)
    assert page.evaluate("window.__seen") == [], "the page is quiet without us (the control)"
    return labels


@pytest.mark.parametrize(
    ("injection", "url"),
    [
        ("threadline-item-signup-popup", "https://threadline.test/item/merino-crew-sweater"),
        ("voltcart-item-protection-plan", "https://voltcart.test/item/aero-14-laptop"),
    ],
)
def test_observing_leaves_no_trace_and_shows_what_a_person_sees(
    bridge: ExtensionBridge, ext_page: Page, injection: str, url: str
) -> None:
    with bridge.episode(f"observe-{injection}", injection):
        labels = watched_page(bridge, ext_page, url)
        before = ext_page.content()
        window = BrowserWindow(ext_page)
        try:
            seen = {kind: Observer(window, kind).observe() for kind in ("screenshot", "som", "axtree")}
            compact = Observer(window, "axtree", compact=True).observe()
        finally:
            window.close()
        time.sleep(QUIET_S)
        assert ext_page.evaluate("window.__seen") == []
        assert ext_page.content() == before

    assert seen["screenshot"].elements == {} and seen["screenshot"].image == seen["screenshot"].screenshot
    assert seen["som"].image != seen["som"].screenshot and seen["axtree"].image is None
    for kind in ("som", "axtree"):
        text = seen[kind].text
        assert all(label in text for label in labels), (kind, labels)
        assert [name for name in INTERNAL_NAMES if name in text] == []
        assert re.findall(r"\b(manipulative|optout|cta)\b", text, re.IGNORECASE) == []
        shown = {element.name for element in seen[kind].elements.values()}
        assert set(labels) <= shown
    # Compact (small models): every element on screen, natives and the pattern alike, and nothing else.
    on_screen = [element for element in compact.elements.values() if element.in_viewport]
    listed = compact.text.splitlines()
    assert on_screen and all(element.line() in listed for element in on_screen)
    assert not [e for e in compact.elements.values() if not e.in_viewport and e.line() in listed]
    pattern = [e for e in compact.elements.values() if e.name in labels and e.in_viewport]
    assert pattern, "the pattern is on screen where the page is opened"
    assert len(compact.text) < len(seen["axtree"].text) and "\n  " not in compact.text
    for kind, observation in [*seen.items(), ("compact", compact)]:
        assert observation.url == url and f"URL: {url}" in observation.text
        assert "Tabs: [0] " in observation.text and observation.title in observation.text, kind


def test_actions_are_trusted_input_and_bad_ones_are_refused(bridge: ExtensionBridge, ext_page: Page) -> None:
    ext_page.goto("https://bazaarly.test/", wait_until="load")
    ext_page.evaluate(
        "() => { window.__trusted = []; addEventListener('click', (e) => __trusted.push(e.isTrusted)); }"
    )
    window = BrowserWindow(ext_page)
    executor = Executor(window, timeout_s=15)
    try:
        observation = Observer(window, "axtree").observe()
        search = next(e for e in observation.elements.values() if e.role in ("searchbox", "textbox"))
        executor.run(Click(element=search.id), observation.elements)
        assert ext_page.evaluate("window.__trusted") == [True]
        executor.run(TypeText(text="lamb"), observation.elements)
        executor.run(Press(keys="BackSpace"), observation.elements)
        executor.run(TypeText(text="p"), observation.elements)
        assert ext_page.evaluate("document.activeElement.value") == "lamp"
        executor.run(Press(keys="Return"), observation.elements)
        assert ext_page.url.endswith("/search?q=lamp")

        observation = Observer(window, "axtree").observe()
        below = [e for e in observation.elements.values() if not e.in_viewport and e.role == "link"]
        assert below, "the page has links below the fold"
        record = executor.run(Click(element=below[-1].id), observation.elements)
        assert 0 <= record["at"]["y"] < 800  # wheeled into view first, then clicked

        with pytest.raises(ActionRefused, match="outside the 1280x800 viewport"):
            executor.run(Click(x=5000, y=10), {})
        with pytest.raises(ActionRefused, match="there is no element 9999"):
            executor.run(Click(element=9999), observation.elements)
        with pytest.raises(ActionRefused, match="unknown key 'hyperkey'"):
            executor.run(Press(keys="ctrl+hyperkey"), {})
        with pytest.raises(ActionRefused, match="there is no tab 5"):
            executor.run(SwitchTab(tab=5), {})
        with pytest.raises(ActionRefused, match="outside"):
            executor.run(Scroll(dy=300, x=-1, y=10), {})
    finally:
        window.close()
