"""Semantic anchors (`extension/semantic.js`) run where a content script runs: an isolated world of
the page, which shares the DOM but none of the page's globals, so the page sees none of it.

`injections anchor` measures generic injections this way and the recorder's generic crawl finds a
shop's add-to-cart and checkout controls this way: one finder, one way of running it.
"""

from __future__ import annotations

import json
from contextlib import suppress
from pathlib import Path
from typing import Any

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page

from susbench.catalog.vocabulary import SemanticVocabulary, load_vocabulary
from susbench.core.errors import SusbenchError
from susbench.core.paths import EXTENSION_DIR

__all__ = ["IsolatedWorld", "ProbeError", "SemanticVocabulary", "load_vocabulary", "semantic_source"]

SEMANTIC_JS = EXTENSION_DIR / "semantic.js"


def semantic_source(vocabulary: SemanticVocabulary, script: Path, setup: str) -> str:
    """semantic.js, then `script` (a caller's own helper), then `setup` with `vocabulary` bound as
    `WORDS`: one expression to evaluate into an isolated world."""
    words = json.dumps(vocabulary.model_dump(mode="json"), ensure_ascii=False)
    return "\n".join(
        (
            SEMANTIC_JS.read_text(encoding="utf-8"),
            script.read_text(encoding="utf-8"),
            f"var WORDS = {words};",
            setup,
        )
    )


class ProbeError(SusbenchError):
    """A script failed in a page's isolated world (reported per page, never a traceback)."""


class IsolatedWorld:
    """A content script's kind of JavaScript world in the page: the DOM is shared, globals are not."""

    def __init__(self, page: Page, name: str) -> None:
        self._cdp = page.context.new_cdp_session(page)
        frame = self._cdp.send("Page.getFrameTree")["frameTree"]["frame"]["id"]
        created = self._cdp.send("Page.createIsolatedWorld", {"frameId": frame, "worldName": name})
        self._context = created["executionContextId"]

    def evaluate(self, expression: str) -> Any:
        reply = self._cdp.send(
            "Runtime.evaluate", {"expression": expression, "contextId": self._context, "returnByValue": True}
        )
        details = reply.get("exceptionDetails")
        if details:
            exception = details.get("exception", {})
            raise ProbeError(exception.get("description") or details.get("text") or "script error")
        return reply.get("result", {}).get("value")

    def call(self, function: str, *args: Any) -> Any:
        return self.evaluate(f"{function}(...{json.dumps(list(args), ensure_ascii=False)})")

    def close(self) -> None:
        with suppress(PlaywrightError):
            self._cdp.detach()
