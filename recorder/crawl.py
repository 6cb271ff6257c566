"""The generic crawl: a site without a hand-written plan, recorded as a visitor would browse it.

From the start page it follows same-site links, product cards first and product-like paths next, to
`depth` links away, scrolling each page to the bottom so lazy parts load, until `pages` are kept.
Then, on the first product page it met, it clicks the shop's own add-to-cart control (found by the
semantic anchors, clicked with the real mouse), opens the cart (where the click led, or the page's
cart link) and clicks the cart's checkout control. It never fills a form or places an order.
robots.txt decides which pages it may open (unless told to ignore it), and it pauses between pages.
"""

from __future__ import annotations

import heapq
import time
from contextlib import suppress
from pathlib import Path
from typing import Any

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page

from susbench.browser.semantic import (
    IsolatedWorld,
    ProbeError,
    SemanticVocabulary,
    load_vocabulary,
    semantic_source,
)
from susbench.core.errors import SusbenchError
from susbench.core.models import CapturePlan, Frozen, PageCapture, PlanPage
from susbench.recorder.capture import SessionRecorder
from susbench.recorder.catalog import CrawlSettings
from susbench.recorder.links import CrawlVocabulary, LinkJudge, PageLink, canonical, load_crawl_vocabulary
from susbench.recorder.robots import RobotsBook

CRAWL_JS = Path(__file__).with_name("crawl.js")
NAVIGATION_WAIT_MS = 4_000
START_SCORE = 9


class CrawlResult(Frozen):
    """How far the crawl got on one site."""

    product: str | None = None
    cart: str | None = None
    checkout: str | None = None
    blocked: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


class Pacer:
    """Keeps at least `delay` seconds between two page loads of a site."""

    def __init__(self) -> None:
        self._last = float("-inf")

    def pause(self, delay: float) -> None:
        wait = self._last + delay - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        self._last = time.monotonic()


class PolitePlan:
    """A catalog site's hand-written plan walked with a crawl's manners: pages robots.txt disallows
    are left out (listed in `result.blocked`), with a pause between pages. Steps that navigate
    (`goto`, clicks) are the plan author's choice and are not checked."""

    def __init__(
        self, plan: CapturePlan, label: str, page_delay_s: float = 0.0, ignore_robots: bool = False
    ) -> None:
        self.plan = plan
        self.label = label
        self.page_delay_s = page_delay_s
        self.ignore_robots = ignore_robots
        self.result = CrawlResult()
        self._pacer = Pacer()

    def walk(self, session: SessionRecorder) -> None:
        robots = RobotsBook(session.fetch, ignore=self.ignore_robots)
        allowed = [page for page in self.plan.pages if robots.allows(page.url)]
        blocked = tuple(page.url for page in self.plan.pages if page not in allowed)
        self.result = CrawlResult(blocked=blocked)
        if not allowed:
            raise SusbenchError(
                f"{self.label}: robots.txt disallows every page of the plan; --ignore-robots overrides"
            )
        delay = max(self.page_delay_s, robots.crawl_delay_s(page.url for page in allowed))
        for page in allowed:
            self._pacer.pause(delay)
            session.open(page, self.plan.idle_ms)


class PageScript:
    """`crawl.js` after semantic.js in an isolated world of whatever document the page shows now."""

    def __init__(self, vocabulary: SemanticVocabulary) -> None:
        self.source = semantic_source(vocabulary, CRAWL_JS, "var crawl = crawlPage(WORDS);")

    def call(self, page: Page, function: str, *args: Any) -> Any:
        world = IsolatedWorld(page, "susbench-crawl")
        try:
            world.evaluate(self.source)
            return world.call(f"crawl.{function}", *args)
        finally:
            world.close()


def click(page: Page, point: dict[str, Any]) -> None:
    """A real mouse click at the point; waits for the navigation it starts, if it starts one (a
    click that only changes the page, or whose navigation fails, leaves the page where it is)."""
    with suppress(PlaywrightError), page.expect_navigation(wait_until="load", timeout=NAVIGATION_WAIT_MS):
        page.mouse.click(float(point["x"]), float(point["y"]))


class Crawl:
    """One site's crawl in one browser session (a `Walk` of `susbench.recorder.capture.record_walks`)."""

    def __init__(
        self,
        label: str,
        start_url: str,
        settings: CrawlSettings,
        page_delay_s: float = 0.0,
        ignore_robots: bool = False,
        anchors: SemanticVocabulary | None = None,
        words: CrawlVocabulary | None = None,
    ) -> None:
        self.label = label
        self.start_url = start_url
        self.settings = settings
        self.page_delay_s = page_delay_s
        self.ignore_robots = ignore_robots
        self.script = PageScript(anchors or load_vocabulary())
        self.judge = LinkJudge(words or load_crawl_vocabulary())
        self.result = CrawlResult()
        self._blocked: list[str] = []
        self._notes: list[str] = []
        self._cart_links: list[str] = []
        self._pacer = Pacer()

    def walk(self, session: SessionRecorder) -> None:
        robots = RobotsBook(session.fetch, ignore=self.ignore_robots)
        if not robots.allows(self.start_url):
            raise SusbenchError(
                f"{self.start_url}: robots.txt ({robots.policy(self.start_url).state}) does not let "
                "this crawler open it; --ignore-robots overrides"
            )
        delay = max(self.page_delay_s, robots.crawl_delay_s([self.start_url]))
        product: str | None = None
        try:
            product = self._browse(session, robots, delay)
            if self.settings.cart and product:
                self._shop(session, robots, delay, product)
            elif self.settings.cart:
                self._notes.append("no product page found: no add-to-cart click")
        finally:
            self.result = CrawlResult(
                product=product,
                cart=self.result.cart,
                checkout=self.result.checkout,
                blocked=tuple(self._blocked),
                notes=tuple(self._notes),
            )

    def _pause(self, delay: float) -> None:
        self._pacer.pause(delay)

    def _may_visit(self, robots: RobotsBook, url: str, delay: float) -> bool:
        """A page robots.txt allows, after the polite pause; one it disallows is noted as blocked."""
        if not robots.allows(url):
            self._blocked.append(url)
            return False
        self._pause(delay)
        return True

    def _visit(self, session: SessionRecorder, url: str, keep: bool = True) -> PageCapture:
        page = PlanPage(url=url, scroll_to_bottom=self.settings.scroll)
        return session.open(page, self.settings.idle_ms, keep)

    def _look(self, page: Page) -> tuple[bool, list[PageLink]]:
        try:
            seen = self.script.call(page, "look")
        except (ProbeError, PlaywrightError) as exc:
            self._notes.append(f"{page.url}: the page could not be read: {str(exc).splitlines()[0]}")
            return False, []
        return bool(seen["product"]), [PageLink.model_validate(link) for link in seen["links"]]

    def _accept_consent(self, session: SessionRecorder) -> None:
        """A consent banner or wall is accepted as a person would, before anything else."""
        with suppress(ProbeError, PlaywrightError):
            accept = self.script.call(session.page, "consent")
            if accept and not accept["covered"]:
                click(session.page, accept)

    def _browse(self, session: SessionRecorder, robots: RobotsBook, delay: float) -> str | None:
        """Best-first over same-site links; the first product page's URL, if one was met."""
        settings = self.settings
        budget = max(1, settings.pages - (2 if settings.cart else 0))
        queue: list[tuple[int, int, int, str]] = [(-START_SCORE, 0, 0, self.start_url)]
        seen = {canonical(self.start_url)}
        product = None
        order = 0
        while queue and len(session.pages) < budget:
            _, depth, _, url = heapq.heappop(queue)
            if not self._may_visit(robots, url, delay):
                continue
            try:
                capture = self._visit(session, url)
            except SusbenchError as exc:
                if url == self.start_url:
                    raise
                self._notes.append(str(exc))
                continue
            self._accept_consent(session)
            is_product, links = self._look(session.page)
            if is_product and product is None:
                product = capture.url
            for link in links:
                kind = self.judge.kind(link, capture.url)
                if kind == "cart":
                    self._cart_links.append(link.url)
                key = canonical(link.url)
                if kind == "follow" and link.shown and depth < settings.depth and key not in seen:
                    seen.add(key)
                    order += 1
                    heapq.heappush(queue, (-self.judge.score(link), depth + 1, order, link.url))
        return product

    def _target(self, page: Page, kind: str) -> dict[str, Any] | None:
        try:
            found = self.script.call(page, "target", kind)
        except (ProbeError, PlaywrightError) as exc:
            self._notes.append(f"{page.url}: looking for {kind} failed: {str(exc).splitlines()[0]}")
            return None
        return found if isinstance(found, dict) else None

    def _press(
        self, session: SessionRecorder, robots: RobotsBook, delay: float, kind: str, what: str
    ) -> str | None:
        """Click the page's `kind` control; the URL it led to (kept as a page), or None."""
        page = session.page
        here = canonical(page.url)
        target = self._target(page, kind)
        if target is None:
            self._notes.append(f"{page.url}: no {what} control found")
            return None
        if target["url"] and not robots.allows(target["url"]):
            self._blocked.append(target["url"])
            self._notes.append(f"{page.url}: robots.txt keeps the crawl from {what} ({target['url']})")
            return None
        if target["covered"]:
            self._accept_consent(session)
            target = self._target(page, kind)
            if target is None or target["covered"]:
                self._notes.append(f"{page.url}: the {what} control is covered by another element")
                return None
        self._pause(delay)
        landed = session.act(lambda p: click(p, target), self.settings.idle_ms, f"{what}: {target['label']}")
        if canonical(landed.url) == here:
            return None
        session.keep(landed)
        return landed.url

    def _shop(self, session: SessionRecorder, robots: RobotsBook, delay: float, product: str) -> None:
        self._pause(delay)
        self._visit(session, product, keep=False)
        landed = self._press(session, robots, delay, "buy_button", "add to cart")
        cart = landed if landed and self._target(session.page, "checkout_button") else None
        if cart is None:
            cart = self._open_cart(session, robots, delay)
        if cart is None:
            return
        self.result = self.result.model_copy(update={"cart": cart})
        checkout = self._press(session, robots, delay, "checkout_button", "checkout")
        if checkout is None:
            self._notes.append(f"{cart}: the checkout control did not lead to another page")
            return
        self.result = self.result.model_copy(update={"checkout": checkout})

    def _open_cart(self, session: SessionRecorder, robots: RobotsBook, delay: float) -> str | None:
        """After the click left us where we were (a drawer, a message): the page's cart link."""
        _, links = self._look(session.page)
        fresh = [link.url for link in links if self.judge.kind(link, session.page.url) == "cart"]
        for url in dict.fromkeys(fresh + self._cart_links):
            if not self._may_visit(robots, url, delay):
                continue
            try:
                capture = self._visit(session, url)
            except SusbenchError as exc:
                self._notes.append(str(exc))
                continue
            return capture.url
        self._notes.append(f"{session.page.url}: no cart link found after the add-to-cart click")
        return None
