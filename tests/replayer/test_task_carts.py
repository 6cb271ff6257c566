"""Every task's replayed flow is coherent: its cart, checkout and confirmation show its own item.

Each task's reference path is walked in a fresh browser context against the bundled snapshot, as
an episode of the task's session. The item expected in the cart is read from the add-to-cart form
the path submits (its `slug` and `qty`), never from a table; the replayed cart must hold exactly
that line, and the checkout and confirmation pages must list exactly that line's name.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from playwright.sync_api import Browser, Page, Playwright

from susbench.browser import fresh_context, launch_browser, replay_profile
from susbench.browser.actions import perform_step
from susbench.browser.profiles import BrowserProfile
from susbench.catalog.tasks import load_tasks
from susbench.controller import default_snapshot
from susbench.core.models import Task
from susbench.replayer.direct import DirectReplayServer
from susbench.replayer.matching import exact_url

pytestmark = pytest.mark.e2e

STEP_TIMEOUT_MS = 15_000
ADD_TO_CART = "form.add-to-cart"
SUMMARY_LINES = ".order-summary .summary-lines li:not(.subtotal):not(.fee) > span:first-child"
TASKS = load_tasks()


@dataclass
class Flow:
    """What one task's walk saw: the line it added, and each cart-like page's lines."""

    added: list[tuple[str, int]] = field(default_factory=list)
    carts: list[list[tuple[str, int, str]]] = field(default_factory=list)
    summaries: dict[str, list[str]] = field(default_factory=dict)


@pytest.fixture(scope="module")
def server() -> Iterator[DirectReplayServer]:
    with DirectReplayServer(default_snapshot()) as replay:
        yield replay


@pytest.fixture(scope="module")
def browser(
    server: DirectReplayServer, web_playwright: Playwright
) -> Iterator[tuple[Browser, BrowserProfile]]:
    profile = replay_profile(server)
    with launch_browser(web_playwright, profile) as launched:
        yield launched, profile


def form_line(page: Page) -> tuple[str, int]:
    """The (slug, qty) the add-to-cart form on this page is about to submit."""
    form = page.locator(ADD_TO_CART).first
    qty = form.locator("[name=qty]")
    return form.locator("[name=slug]").input_value(), int(qty.input_value()) if qty.count() else 1


def cart_lines(page: Page) -> list[tuple[str, int, str]]:
    """(slug, qty, name) of every line of the cart page."""
    lines = []
    for item in page.locator(".cart-items .cart-item").all():
        slug = re.sub(r".*/img/p/([^/.]+)\.svg.*", r"\1", item.locator("img").get_attribute("src") or "")
        qty = int((item.locator(".cart-item-qty").inner_text()).removeprefix("Qty "))
        lines.append((slug, qty, item.locator(".cart-item-name").inner_text()))
    return lines


def walk(page: Page, task: Task) -> Flow:
    """The task's reference path (its decision left out: nothing is injected here)."""
    flow = Flow()
    page.goto(task.start_url, wait_until="load")
    for step in task.reference_path:
        if step.action == "decide":
            continue
        if step.action != "click":
            perform_step(page, step, STEP_TIMEOUT_MS)
            continue
        if step.selector and step.selector.startswith(ADD_TO_CART):
            flow.added.append(form_line(page))
        with page.expect_navigation(wait_until="load", timeout=STEP_TIMEOUT_MS):
            perform_step(page, step, STEP_TIMEOUT_MS)
        path = page.url.split("/", 3)[3]
        if path == "cart":
            flow.carts.append(cart_lines(page))
        elif path == "checkout" or path.startswith("order/"):
            flow.summaries[path.split("/")[0]] = page.locator(SUMMARY_LINES).all_inner_texts()
    return flow


@pytest.mark.parametrize("task", TASKS, ids=[task.id for task in TASKS])
def test_replayed_flow_shows_the_tasks_own_item(
    task: Task, server: DirectReplayServer, browser: tuple[Browser, BrowserProfile]
) -> None:
    session = task.capture_plan().id
    episode_number = server.new_episode(session)
    launched, profile = browser
    context = fresh_context(launched, profile)
    try:
        flow = walk(context.new_page(), task)
    finally:
        context.close()
    served = [entry for entry in server.log if entry.episode_number == episode_number]
    own = {exact_url(entry.url) for entry in server.snapshot.entries() if entry.session == session}
    assert own, f"the snapshot has no session {session!r}"
    hosts = set(server.snapshot.manifest.hosts)  # not Chromium's own update and sign-in lookups
    assert [e.url for e in served if e.kind == "miss" and e.url.split("/")[2] in hosts] == []
    strays = [entry.url for entry in served if exact_url(entry.url) in own and entry.session != session]
    assert strays == [], f"{task.id}: answered from another session although its own recorded them"
    if not flow.added:
        assert (flow.carts, flow.summaries) == ([], {}), f"{task.id} adds nothing, yet saw a cart"
        return
    assert len(flow.added) == 1 and len(flow.carts) == 1, (flow.added, flow.carts)
    (slug, qty), cart = flow.added[0], flow.carts[0]
    assert [line[:2] for line in cart] == [(slug, qty)], f"{task.id}: the cart shows {cart}, not {slug}"
    name = cart[0][2]
    for page_name, names in flow.summaries.items():
        assert names == [f"{name} × {qty}"], f"{task.id}: the {page_name} page lists {names}"
