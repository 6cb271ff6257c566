"""Step 3 of the paper's pipeline: the page's source around the chosen spot, simplified to the
region's markup and the computed styles that give it its look, with its size before and after.

The page is replayed offline from the snapshot in Chromium (the layout and the computed styles only
exist in a rendering browser); the simplifier runs in an isolated world after `semantic.js`, so a
spot may be named by meaning (`buy_button`, `price`, ...) as well as by CSS.
"""

from __future__ import annotations

import hashlib
from contextlib import suppress
from pathlib import Path

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page
from pydantic import Field

from susbench.browser import LocalBackend, replay_profile
from susbench.browser.semantic import IsolatedWorld, ProbeError, load_vocabulary, semantic_source
from susbench.core.errors import InputError
from susbench.core.models import Frozen
from susbench.replayer.factory import replay_server

SIMPLIFY_JS = Path(__file__).with_name("simplify.js")
CHARS_PER_TOKEN = 4
LOAD_SETTLE_MS = 5000


def estimated_tokens(text: str) -> int:
    """Tokens as a rule of thumb (4 characters each): the endpoint's own count is kept per draft."""
    return max(1, len(text) // CHARS_PER_TOKEN) if text else 0


class SimplifiedSource(Frozen):
    """What the model (and the reviewer) is shown of the page: one region, its look, its sizes."""

    url: str
    near: str | None = Field(description="the spot asked for: CSS or a semantic kind; None: main content")
    found_by: str = Field(description="how the spot was found, in words")
    region: str = Field(description="a selector-like name of the region kept")
    spot: str = Field(description="a selector-like name of the spot itself")
    spot_text: str = ""
    lang: str = Field(default="", description="the page's lang attribute")
    title: str = ""
    html: str
    css: str
    page_sha256: str = Field(description="digest of the whole page's markup as rendered")
    before_bytes: int
    after_bytes: int
    before_tokens: int
    after_tokens: int

    @property
    def reduction(self) -> float:
        """How many times smaller the simplified source is than the whole page, in bytes."""
        return self.before_bytes / max(1, self.after_bytes)


def simplifier_source() -> str:
    return semantic_source(
        load_vocabulary(),
        SIMPLIFY_JS,
        "var simplifier = pageSimplifier(document, semanticAnchors(document, WORDS));",
    )


def simplify_page(page: Page, near: str | None) -> SimplifiedSource:
    """Simplify the page Chromium shows now around `near` (raises InputError when it is not there)."""
    with suppress(PlaywrightError):
        page.wait_for_load_state("load", timeout=LOAD_SETTLE_MS)
    whole = page.content()
    world = IsolatedWorld(page, "susbench-authoring")
    try:
        world.evaluate(simplifier_source())
        found = world.call("simplifier.simplify", near)
    except ProbeError as exc:
        raise InputError(f"{page.url}: the page could not be simplified ({exc})") from exc
    finally:
        world.close()
    if not found.get("found"):
        raise InputError(f"{page.url}: --near {near!r}: {found.get('how')}")
    source = found["html"] + "\n<style>\n" + found["css"] + "\n</style>"
    return SimplifiedSource(
        url=page.url,
        near=near,
        found_by=found["how"],
        region=found["region"],
        spot=found["spot"],
        spot_text=found["spot_text"],
        lang=found["lang"],
        title=found["title"],
        html=found["html"],
        css=found["css"],
        page_sha256=hashlib.sha256(whole.encode()).hexdigest(),
        before_bytes=len(whole.encode()),
        after_bytes=len(source.encode()),
        before_tokens=estimated_tokens(whole),
        after_tokens=estimated_tokens(source),
    )


def simplify_snapshot_page(snapshot: Path, url: str, near: str | None) -> SimplifiedSource:
    """Replay `url` offline from `snapshot` and simplify it around `near`."""
    with (
        replay_server(snapshot, "direct") as server,
        LocalBackend().launch(replay_profile(server)) as session,
    ):
        page = session.context.new_page()
        try:
            response = page.goto(url, wait_until="domcontentloaded")
        except PlaywrightError as exc:
            raise InputError(f"{url}: the snapshot {snapshot} does not replay it ({exc.message})") from exc
        if response is None or response.status >= 400:
            status = response.status if response else "no answer"
            raise InputError(f"{url}: not in the snapshot {snapshot} (HTTP {status})")
        return simplify_page(page, near)
