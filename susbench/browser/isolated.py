"""What the scripted baselines read off a page, without the page's main world: scripts evaluated in an
isolated world of their own and hit-testing by the browser, both over the Chrome DevTools Protocol.

A page can override anything of its main world (`document.elementFromPoint`, `navigation`,
`scrollTo`...) and steer or stall whoever asks it there. An isolated world shares the page's DOM but
none of its JavaScript (built-ins and prototypes are its own), and the protocol's hit test asks the
browser's layout directly, so neither can be lied to by page script, and the page sees neither.
"""

from __future__ import annotations

import json
from typing import Any
from weakref import WeakKeyDictionary

from playwright.sync_api import CDPSession, Page
from playwright.sync_api import Error as PlaywrightError

from susbench.core.errors import BrowserError

WORLD_NAME = "susbench-operator"
_SESSIONS: WeakKeyDictionary[Page, CDPSession] = WeakKeyDictionary()


class IsolatedWorldError(BrowserError):
    """A script of the operator's own world failed in the page."""


def cdp(page: Page) -> CDPSession:
    """The page's DevTools session, one per page."""
    session = _SESSIONS.get(page)
    if session is None:
        session = page.context.new_cdp_session(page)
        _SESSIONS[page] = session
    return session


class World:
    """An isolated world in the page's current main-frame document: its globals last as long as it."""

    def __init__(self, page: Page) -> None:
        self.session = cdp(page)
        frame = self.session.send("Page.getFrameTree")["frameTree"]["frame"]["id"]
        created = self.session.send("Page.createIsolatedWorld", {"frameId": frame, "worldName": WORLD_NAME})
        self.context_id: int = created["executionContextId"]

    def evaluate(self, function: str, *args: Any) -> Any:
        """`function(...args)` in this world (awaited when it returns a promise), its value as JSON."""
        expression = f"({function})(...{json.dumps(list(args))})"
        answer = self.session.send(
            "Runtime.evaluate",
            {
                "expression": expression,
                "contextId": self.context_id,
                "returnByValue": True,
                "awaitPromise": True,
            },
        )
        if "exceptionDetails" in answer:
            details = answer["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text", "")
            raise IsolatedWorldError(f"script in the operator's world failed: {text.splitlines()[0]}")
        return answer["result"].get("value")


def evaluate(page: Page, function: str, *args: Any) -> Any:
    """`function(...args)` once, in a fresh isolated world of the page."""
    return World(page).evaluate(function, *args)


def node_at(page: Page, x: float, y: float) -> int | None:
    """The browser's own hit test at a viewport point: the backend id of the topmost node there."""
    session = cdp(page)
    scrolled = session.send("Page.getLayoutMetrics")["cssVisualViewport"]  # the hit test takes page points
    point = {"x": round(x + scrolled["pageX"]), "y": round(y + scrolled["pageY"])}
    try:
        found = session.send("DOM.getNodeForLocation", {**point, "includeUserAgentShadowDOM": False})
    except PlaywrightError:  # no node at that point (outside the document): the protocol answers an error
        return None
    return int(found["backendNodeId"])


def node_box(page: Page, backend_node_id: int) -> dict[str, float] | None:
    """The node's border box in the viewport, as painted (transforms and zoom included)."""
    try:
        quads = cdp(page).send("DOM.getContentQuads", {"backendNodeId": backend_node_id})["quads"]
    except PlaywrightError:  # the node is gone or not rendered
        return None
    if not quads:
        return None
    xs, ys = quads[0][0::2], quads[0][1::2]
    return {"x": min(xs), "y": min(ys), "width": max(xs) - min(xs), "height": max(ys) - min(ys)}


def scroll_into_view(page: Page, backend_node_id: int) -> None:
    cdp(page).send("DOM.scrollIntoViewIfNeeded", {"backendNodeId": backend_node_id})


def contains(world: World, outer: int, inner: int) -> bool:
    """Whether node `inner` is `outer` or inside it (shadow trees included), judged in `world`."""
    if outer == inner:
        return True
    session = world.session

    def resolve(node: int) -> str:
        found = session.send(
            "DOM.resolveNode", {"backendNodeId": node, "executionContextId": world.context_id}
        )
        return str(found["object"]["objectId"])

    try:
        answer = session.send(
            "Runtime.callFunctionOn",
            {
                "objectId": resolve(outer),
                "functionDeclaration": """function (inner) {
                  for (let node = inner; node; node = node.parentNode || node.host) {
                    if (node === this) return true;
                  }
                  return false;
                }""",
                "arguments": [{"objectId": resolve(inner)}],
                "returnByValue": True,
            },
        )
    except PlaywrightError:  # either node went away meanwhile
        return False
    return bool(answer["result"].get("value"))
