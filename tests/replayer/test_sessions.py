"""Browser sessions: recorded one plan per fresh browser, labelled in the WARC, CDXJ and pages, and
preferred per episode by both replay servers (falling back to the whole snapshot)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from playwright.sync_api import Playwright
from warcio.archiveiterator import ArchiveIterator

from susbench.browser import LocalBackend, fresh_context, launch_browser, replay_profile
from susbench.controller import default_snapshot
from susbench.core.errors import SusbenchError
from susbench.core.models import CapturePlan, PlanPage, Step
from susbench.recorder.capture import record_plans, session_labels
from susbench.recorder.proxy import RecordingProxy
from susbench.replayer.check import check_snapshot
from susbench.replayer.direct import DirectReplayServer
from susbench.replayer.proxy import ReplayServer
from susbench.replayer.service import ReplayService
from susbench.snapshot import IndexEntry, Snapshot
from susbench.snapshot.cdxj import SESSION_HEADER
from susbench.snapshot.wacz import PAGES_MEMBER, WARC_MEMBER
from susbench.web import LocalWeb
from tests.support.replay import IndexedEntry, index_of

ITEMS = ("margherita", "garlic-knots")


def shop_plan(slug: str) -> CapturePlan:
    """Add one item to the cart, the way a task's capture plan does."""
    return CapturePlan(
        id=f"order-{slug}",
        idle_ms=100,
        pages=(
            PlanPage(
                url=f"https://pizzapalace.test/item/{slug}",
                scroll_to_bottom=False,
                steps=(Step(action="click", selector="form.add-to-cart button[type=submit]"),),
            ),
        ),
    )


def test_each_layer_prefers_the_episodes_session_then_the_whole_snapshot() -> None:
    index = index_of(
        IndexedEntry("https://s.test/cart", 0, session="a"),
        IndexedEntry("https://s.test/cart", 1, session="b"),
        IndexedEntry("https://s.test/cart", 2, session="a"),
        IndexedEntry("https://s.test/search?q=b", 3, session="b"),
        IndexedEntry("https://s.test/app.js?cb=1", 4, session="a"),
        IndexedEntry("https://s.test/app.js?cb=2", 5, session="b"),
        IndexedEntry("https://s.test/only-b", 6, session="b"),
        IndexedEntry("https://s.test/search?q=a&page=2", 7, session="a"),
    )

    def seq(url: str, session: str | None) -> int | None:
        match = index.lookup("GET", url, session=session)
        return None if match is None else match.entry.seq

    assert [seq("https://s.test/cart", "b") for _ in range(2)] == [1, 1]
    assert [seq("https://s.test/cart", "a") for _ in range(3)] == [0, 2, 2]
    index.new_episode()
    assert seq("https://s.test/cart", None) == 0 and seq("https://s.test/cart", "unknown") == 1
    assert seq("https://s.test/app.js?cb=9", "b") == 5  # canonical, in the session first
    assert seq("https://s.test/only-b", "a") == 6  # nothing in the session: the whole snapshot
    assert seq("https://s.test/search?q=b", "a") == 3  # an exact match elsewhere beats a fuzzy one here
    fuzzy = index.lookup("GET", "https://s.test/search?q=c&page=2", session="a")
    assert fuzzy is not None and fuzzy.kind == "fuzzy" and fuzzy.entry.seq == 7


def test_cdxj_lines_carry_the_session() -> None:
    entry = IndexEntry(
        surt="test,s)/cart", timestamp="20261129120000", url="https://s.test/cart", seq=3,
        filename="data.warc.gz", offset=0, length=10, session="order-margherita",
    )  # fmt: skip
    line = entry.to_cdxj()
    assert json.loads(line.split(" ", 2)[2])["session"] == "order-margherita"
    assert IndexEntry.from_cdxj(line) == entry
    assert "session" not in entry.model_copy(update={"session": None}).to_cdxj()


def test_session_labels_are_unique_per_plan() -> None:
    plans = [CapturePlan(id=name, pages=(PlanPage(url="https://s.test/"),)) for name in ("url", "x", "url")]
    assert session_labels(plans) == ["url", "x", "url-2"]


def test_a_bad_session_label_is_refused_naming_the_option() -> None:
    with pytest.raises(SusbenchError, match="warc_session"):
        RecordingProxy(session="two words").start()
    with RecordingProxy(record=False) as proxy, pytest.raises(SusbenchError, match="warc_session: 'a\\\\nb'"):
        proxy.begin_session("a\nb")


@pytest.fixture(scope="module")
def two_carts(
    local_web: LocalWeb, web_playwright: Playwright, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """Two plans on one site, each adding another item, recorded one after the other."""
    return record_plans(
        [shop_plan(slug) for slug in ITEMS],
        tmp_path_factory.mktemp("sessions") / "two-carts.wacz",
        host_map=local_web.resolve,
        upstream_ca=local_web.ca_cert_path,
        backend=LocalBackend(web_playwright),
    )


@pytest.mark.e2e
def test_every_record_and_page_names_its_plans_session(two_carts: Path) -> None:
    with zipfile.ZipFile(two_carts) as archive:
        raw = archive.read(WARC_MEMBER)
        pages = [json.loads(line) for line in archive.read(PAGES_MEMBER).decode().splitlines()[1:]]
    sessions = [
        record.rec_headers.get_header(SESSION_HEADER)
        for record in ArchiveIterator(io.BytesIO(raw))
        if record.rec_type != "warcinfo"
    ]
    assert set(sessions) == {f"order-{slug}" for slug in ITEMS}
    # Every page a plan visits is listed (its item page and its cart), each under the plan's session.
    listed = [(page["url"].rsplit("/", 1)[1], page["session"]) for page in pages]
    assert [pair for pair in listed if pair[0] == "cart"] == [("cart", f"order-{slug}") for slug in ITEMS]
    assert all((slug, f"order-{slug}") in listed for slug in ITEMS), listed
    assert {session for _, session in listed} == {f"order-{slug}" for slug in ITEMS}
    with Snapshot.open(two_carts) as snapshot:
        carts = sorted((e.seq, e.session) for e in snapshot.entries() if e.url.endswith("/cart"))
        posts = [entry.session for entry in snapshot.entries() if entry.method == "POST"]
    assert [session for _, session in carts] == [f"order-{slug}" for slug in ITEMS]
    assert sorted(posts) == sorted(f"order-{slug}" for slug in ITEMS)


@pytest.mark.e2e
@pytest.mark.parametrize("mode", ["direct", "proxy"])
def test_each_episode_sees_its_own_sessions_cart(
    two_carts: Path, web_playwright: Playwright, mode: str
) -> None:
    server: ReplayService = DirectReplayServer(two_carts) if mode == "direct" else ReplayServer(two_carts)
    with server, launch_browser(web_playwright, replay_profile(server)) as browser:
        seen: dict[str | None, str] = {}
        for session in (*reversed([f"order-{slug}" for slug in ITEMS]), None):
            episode_number = server.new_episode(session)
            context = fresh_context(browser, replay_profile(server))
            page = context.new_page()
            page.goto("https://pizzapalace.test/cart", wait_until="load")
            seen[session] = page.locator(".cart-item-name").inner_text()
            context.close()
            (cart,) = [
                e for e in server.log if e.episode_number == episode_number and e.url.endswith("/cart")
            ]
            assert cart.session == (session or "order-margherita") and cart.kind == "exact"
    assert seen == {
        "order-garlic-knots": "Garlic Knots (8)",
        "order-margherita": "Margherita Pizza",
        None: "Margherita Pizza",  # no session: the whole snapshot, in recording order
    }


@pytest.mark.e2e
def test_replay_check_loads_each_page_in_its_session(two_carts: Path, web_playwright: Playwright) -> None:
    pages = check_snapshot(two_carts, mode="direct", playwright=web_playwright)
    assert [page.error for page in pages] == [None] * 2 * len(ITEMS)  # each plan's item page and cart
    # Chromium's own sign-in lookups (accounts.google.com) miss; nothing of the recorded site does.
    assert [url for page in pages for url in page.coverage.misses if "pizzapalace.test" in url] == []


def test_replay_serve_names_the_sessions_a_snapshot_has() -> None:
    """One red line, exit code 2, no traceback (as `susbench` prints every user error)."""
    arguments = ["replay", "serve", str(default_snapshot()), "--mode", "direct", "--port", "0"]
    result = subprocess.run(
        [sys.executable, "-m", "susbench", *arguments, "--session", "x"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 2 and "Traceback" not in result.stderr
    with Snapshot.open(default_snapshot()) as snapshot:
        first_session = min(entry.session for entry in snapshot.entries() if entry.session)
    # The line is shortened in its middle to the terminal's width: the first name's start is always shown.
    assert "--session 'x'" in result.stderr and f"(it has {first_session[:12]}" in result.stderr
