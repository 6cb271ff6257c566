"""The extension in parts: the build ships every part it loads, the parts leave the page's own
JavaScript world untouched, and the look part reads the host page's colours with its one parser."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Page

from susbench.browser.bridge import ExtensionBridge
from susbench.catalog.injections import EXTENSION_SOURCES, build_extension, load_injections
from susbench.core.models import Injection
from susbench.core.paths import EXTENSION_DIR

# Buttons that must not pass for the page's primary (translucent, near-white, not an rgb() colour),
# the real primary and secondary, and a dark card inside the light card the pattern should copy.
LOOK_PAGE = """<!doctype html><style>
body { background: rgb(250, 250, 250); color: rgb(20, 20, 20); font: 16px serif }
.btn { border: 0; padding: 10px 24px }
.ghost { background: rgba(200, 0, 0, 0.4) }
.pale { background: rgb(247, 247, 247) }
.wide { background: color(display-p3 0 0.4 0.9) }
.go { background: rgb(10, 110, 60); color: rgb(255, 255, 255); border-radius: 9px }
.outline { background: transparent; border: 2px solid rgb(10, 110, 60) }
.card { background: rgb(255, 255, 240); border: 1px solid rgb(200, 200, 200); border-radius: 12px;
  max-width: 400px }
.dark { background: rgb(30, 30, 30); border: 1px solid rgb(90, 90, 90); border-radius: 4px }
</style><main>
<button class="btn btn-primary ghost">Ghost</button> <button class="btn btn-primary pale">Pale</button>
<button class="btn btn-primary wide">Wide</button> <a class="btn go" href="#go">Go</a>
<button class="btn outline">Later</button>
<div class="card"><div class="dark"><p id="anchor">Anchor text</p></div></div>
</main>"""


def script_names(manifest: dict[str, Any], worker_source: str) -> set[str]:
    """Every script the manifest and the service worker's importScripts load."""
    names = {manifest["background"]["service_worker"]}
    for entry in manifest["content_scripts"]:
        names.update(entry["js"])
    for call in re.findall(r"importScripts\(([^)]*)\)", worker_source):
        names.update(re.findall(r'"([^"]+)"', call))
    return names


def test_build_ships_every_part_it_loads(tmp_path: Path) -> None:
    on_disk = {
        path.relative_to(EXTENSION_DIR).as_posix() for path in EXTENSION_DIR.rglob("*") if path.is_file()
    }
    assert on_disk == set(EXTENSION_SOURCES)
    built = build_extension(load_injections()[:1], tmp_path / "build")
    manifest = json.loads((built / "manifest.json").read_text())
    loaded = script_names(manifest, (built / "sw.js").read_text())
    assert "store.js" in loaded and "content/main.js" in loaded
    assert [name for name in sorted(loaded) if not (built / name).is_file()] == []
    assert manifest["content_scripts"][-1]["js"][-1] == "content/main.js"  # the wiring runs last


WINDOW_NAMES = "() => Object.getOwnPropertyNames(window).sort()"


@pytest.mark.e2e
def test_parts_add_nothing_to_the_pages_javascript_world(
    bridge: ExtensionBridge, ext_page: Page, browser_direct: BrowserContext, catalog: dict[str, Injection]
) -> None:
    injection = catalog["voltcart-item-protection-plan"]
    with bridge.episode("parts-globals", injection.id):
        ext_page.goto(str(injection.page.example))
        assert bridge.choices(ext_page, wait=5.0), "the pattern was not drawn"
        with_extension = ext_page.evaluate(WINDOW_NAMES)
    plain = browser_direct.new_page()
    plain.goto(str(injection.page.example))
    without_extension = plain.evaluate(WINDOW_NAMES)
    plain.close()
    assert set(with_extension) == set(without_extension)


@pytest.fixture
def look_page(browser_direct: BrowserContext) -> Iterator[Page]:
    """The look part and what it reads, loaded into a plain page of known colours."""
    page = browser_direct.new_page()
    page.set_content(LOOK_PAGE)
    for part in ("content/state.js", "content/match.js", "content/boxes.js", "content/look.js"):
        page.add_script_tag(path=EXTENSION_DIR / part)
    yield page
    page.close()


@pytest.mark.e2e
def test_look_copies_the_solid_primary_the_outlined_secondary_and_the_light_card(look_page: Page) -> None:
    drawn = look_page.evaluate("pageHelper.look.paint(document.getElementById('anchor'), {}, false)")
    css, properties = drawn["css"], drawn["values"]
    assert properties["--primary-bg"] == "rgb(10, 110, 60)"
    assert properties["--primary-radius"] == "9px"
    assert properties["--secondary-border"] == "2px solid rgb(10, 110, 60)"
    assert properties["--card-radius"] == "12px"  # the light card, not the dark one inside it
    assert properties["--card-border"] == "1px solid rgb(200, 200, 200)"
    assert properties["--surface"] == "rgb(255, 255, 240)"  # the panel's ground: the card's
    assert "[data-look~=primary]{" in css  # each component as a rule the template's parts take
