"""The local web in real headless Chromium and over raw HTTP(S): flows, drift, determinism, TLS."""

from __future__ import annotations

import gzip
import http.client
import json
import socket
import ssl
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Playwright
from typer.testing import CliRunner

from susbench.browser import fresh_context, launch_browser, routed_profile
from susbench.cli.web import app
from susbench.web import SITES, LocalWeb
from tests.support.proxy_client import Fetched

CHECKOUT_VALUES = {
    "name": "Ada Lovelace",
    "email": "ada@example.test",
    "address": "12 Analytical Row",
    "city": "London",
    "postcode": "N1 9GU",
    "card": "4242 4242 4242 4242",
    "expiry": "12/29",
    "cvc": "123",
}


DETAIL_ROUTES = "{item,hotel,article,plan}"


@pytest.fixture(scope="module")
def browser(web_playwright: Playwright, local_web: LocalWeb) -> Iterator[Browser]:
    """One Chromium for the module; every test opens its own context."""
    with launch_browser(web_playwright, routed_profile(local_web)) as browser:
        yield browser


@pytest.fixture
def context(browser: Browser, local_web: LocalWeb) -> Iterator[BrowserContext]:
    context = fresh_context(browser, routed_profile(local_web))
    yield context
    context.close()


def fetch(
    web: LocalWeb,
    host: str,
    path: str,
    method: str = "GET",
    headers: dict[str, str] | None = None,
    body: bytes | None = None,
) -> Fetched:
    """One HTTPS request to the local port, verified against the local CA with SNI = host."""
    tls = ssl.create_default_context(cafile=str(web.ca_cert_path))
    connection = http.client.HTTPSConnection(host, web.port, context=tls, timeout=10)
    raw = socket.create_connection(("127.0.0.1", web.port), timeout=10)
    connection.sock = tls.wrap_socket(raw, server_hostname=host)
    connection.request(method, path, body=body, headers=headers or {})
    response = connection.getresponse()
    fetched = Fetched(response.status, response.getheaders(), response.read())
    connection.close()
    return fetched


def walk(page: Page, host: str) -> str:
    """Home -> search -> detail -> add to cart -> checkout -> confirmation; returns the order id."""
    page.goto(f"https://{host}/", wait_until="domcontentloaded")
    first_name = page.locator(".product-card .product-name").first.inner_text()
    page.locator("form.search input[name=q]").fill(first_name.split()[0])
    page.locator("form.search button").click()
    page.wait_for_url("**/search?q=*", wait_until="domcontentloaded")
    page.locator(".product-grid .product-card a.product-link").first.click()
    page.wait_for_url(f"**/{DETAIL_ROUTES}/*", wait_until="domcontentloaded")
    assert page.locator("h1.product-title").is_visible()
    assert page.locator(".price").first.is_visible()
    page.locator("form.add-to-cart button.add-to-cart-btn").click()
    page.wait_for_url("**/cart", wait_until="domcontentloaded")
    assert page.locator(".cart-items .cart-item").count() == 1
    assert page.locator(".cart-total").is_visible()
    page.locator("a.checkout-btn").click()
    page.wait_for_url("**/checkout", wait_until="domcontentloaded")
    assert page.locator(".order-summary .order-total").is_visible()
    form = page.locator("form#checkout-form")
    for name, value in CHECKOUT_VALUES.items():
        field = form.locator(f"input[name={name}]")
        if field.count():
            field.fill(value)
    form.locator("button.place-order").click()
    page.wait_for_url("**/order/*", wait_until="domcontentloaded")
    assert page.locator("h1.confirmation").is_visible()
    return page.locator(".order-id").inner_text()


@pytest.mark.e2e
@pytest.mark.parametrize("host", [site.host for site in SITES])
def test_site_end_to_end(context: BrowserContext, host: str) -> None:
    page = context.new_page()
    order_id = walk(page, host)
    assert order_id and order_id in page.url
    assert page.locator("header.site-header a.logo").is_visible()
    assert page.locator("footer.site-footer").count() == 1


def test_sites_cover_every_category() -> None:
    assert len(SITES) >= 8
    assert len({site.category for site in SITES}) == 8
    assert all(site.host.endswith(".test") for site in SITES)


@pytest.mark.e2e
def test_lazy_recommendations_only_after_scroll(context: BrowserContext) -> None:
    page = context.new_page()
    seen: list[str] = []
    page.on("request", lambda request: seen.append(request.url))
    page.goto("https://voltcart.test/", wait_until="networkidle")
    assert any("/api/cart?_=" in url for url in seen), "cache-busted JSON fetch on load"
    assert not any("/api/recommendations" in url for url in seen)
    with page.expect_request("**/api/recommendations?_=*"):
        page.mouse.wheel(0, 20000)
    page.wait_for_selector("section.recommendations.loaded .rec-card")


def test_same_date_and_seed_are_byte_identical() -> None:
    paths = ["/", "/search?q=pizza", "/item/margherita", "/api/reviews/margherita", "/img/hero.svg"]

    def capture() -> list[tuple[int, list[tuple[str, str]], bytes]]:
        with LocalWeb(date="2026-11-29", seed=7) as web:
            out = []
            for path in paths:
                response = fetch(web, "pizzapalace.test", path, headers={"Accept-Encoding": "gzip"})
                out.append((response.status, response.headers, response.body))
            added = fetch(
                web,
                "pizzapalace.test",
                "/cart/add",
                "POST",
                {"Content-Type": "application/x-www-form-urlencoded"},
                b"slug=margherita&qty=2",
            )
            out.append((added.status, added.headers, added.body))
            return out

    assert capture() == capture()


@pytest.mark.e2e
def test_drift_changes_prices_order_and_classes(web_playwright: Playwright) -> None:
    with LocalWeb(date="2026-11-29") as before, LocalWeb(date="2026-12-29") as after:
        old = fetch(before, "bazaarly.test", "/").body.decode()
        new = fetch(after, "bazaarly.test", "/").body.decode()
        assert old != new

        def slugs(html: str) -> list[str]:
            return [chunk.split('"')[0] for chunk in html.split('data-slug="')[1:]]

        assert sorted(slugs(old)) == sorted(slugs(new)) and slugs(old) != slugs(new)
        old_item = fetch(before, "bazaarly.test", "/item/brass-desk-lamp").body.decode()
        new_item = fetch(after, "bazaarly.test", "/item/brass-desk-lamp").body.decode()
        assert "add-to-cart-btn" in old_item and "add-to-cart-btn" not in new_item
        assert "btn-add-bag" in new_item
        price = old_item.split('class="price">')[1].split("<")[0]
        assert price not in new_item.split('class="price">')[1].split("<")[0]

        with launch_browser(web_playwright, routed_profile(after)) as browser:
            page = browser.new_page()
            page.goto("https://bazaarly.test/item/brass-desk-lamp")
            assert page.get_by_role("button", name="Add to cart").is_visible()
            assert page.locator("main#main form.search").count() == 1
            assert page.locator("header.site-header form.search").count() == 0
            page.goto("https://bazaarly.test/")
            assert page.get_by_role("search").is_visible()


def test_https_needs_the_local_ca(local_web: LocalWeb) -> None:
    response = fetch(local_web, "staywise.test", "/hotel/alpine-lodge-innsbruck")
    assert response.status == 200
    untrusted = ssl.create_default_context()
    raw = socket.create_connection(("127.0.0.1", local_web.port), timeout=10)
    with pytest.raises(ssl.SSLCertVerificationError):
        untrusted.wrap_socket(raw, server_hostname="staywise.test")
    raw.close()


def test_plain_http_gzip_redirect_and_unknown_host(local_web: LocalWeb) -> None:
    before = local_web.connections
    connection = http.client.HTTPConnection("127.0.0.1", local_web.port, timeout=10)
    connection.request(
        "GET", "/static/site.css", headers={"Host": "threadline.test", "Accept-Encoding": "gzip"}
    )
    zipped = connection.getresponse()
    body = zipped.read()
    assert zipped.getheader("Content-Encoding") == "gzip"
    assert int(zipped.getheader("Content-Length") or 0) == len(body)
    connection.request("GET", "/static/site.css", headers={"Host": "threadline.test"})
    plain = connection.getresponse()
    assert plain.getheader("Content-Encoding") is None
    assert gzip.decompress(body) == plain.read()
    connection.request("GET", "/deals", headers={"Host": "threadline.test"})
    redirect = connection.getresponse()
    redirect.read()
    assert redirect.status == 302 and redirect.getheader("Location") == "/collections/deals"
    connection.request("GET", "/", headers={"Host": "nowhere.test"})
    unknown = connection.getresponse()
    text = unknown.read().decode()
    assert unknown.status == 404 and all(site.host in text for site in SITES)
    connection.close()
    assert local_web.connections == before + 1, "keep-alive reuses one connection"


def test_checkout_validation_and_api(local_web: LocalWeb) -> None:
    added = fetch(
        local_web,
        "tunewave.test",
        "/cart/add",
        "POST",
        {"Content-Type": "application/x-www-form-urlencoded"},
        b"slug=family&qty=1",
    )
    assert added.status == 303 and added.header("Location") == "/cart"
    cookie = (added.header("Set-Cookie") or "").split(";")[0]
    cart = json.loads(fetch(local_web, "tunewave.test", "/api/cart?_=1", headers={"Cookie": cookie}).body)
    assert cart["count"] == 1
    headers = {"Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"}
    invalid = fetch(local_web, "tunewave.test", "/checkout", "POST", headers, b"name=Ada")
    assert invalid.status == 422 and b'role="alert"' in invalid.body


def test_dozens_of_concurrent_tls_connections(local_web: LocalWeb) -> None:
    hosts = [site.host for site in SITES] * 6
    with ThreadPoolExecutor(max_workers=48) as pool:
        statuses = list(pool.map(lambda host: fetch(local_web, host, "/").status, hosts))
    assert statuses == [200] * len(hosts)


def test_cli_serve_prints_urls_flags_and_host_map(monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupt(seconds: float) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("susbench.cli.web.time.sleep", interrupt)
    result = CliRunner().invoke(app, ["serve", "--port", "0", "--date", "2026-11-29"])
    assert result.exit_code == 0, result.output
    assert "https://pizzapalace.test/" in result.output
    assert "--host-resolver-rules=MAP *.test 127.0.0.1:" in result.output
    assert "--ignore-certificate-errors-spki-list=" in result.output
    assert "--resolve pizzapalace.test=127.0.0.1:" in result.output


def test_stop_hangs_up_kept_alive_connections() -> None:
    web = LocalWeb(date="2026-11-29").start()
    connection = http.client.HTTPConnection("127.0.0.1", web.port, timeout=5)
    connection.request("GET", "/robots.txt", headers={"Host": "voltcart.test"})
    assert connection.getresponse().read().startswith(b"User-agent")
    web.stop()
    with pytest.raises((OSError, http.client.HTTPException)):
        connection.request("GET", "/robots.txt", headers={"Host": "voltcart.test"})
        connection.getresponse().read()
    connection.close()


def test_cli_lists_sites() -> None:
    result = CliRunner().invoke(app, ["sites"])
    assert result.exit_code == 0
    rows = json.loads(result.output)
    assert {row["host"] for row in rows} == {site.host for site in SITES}


@pytest.mark.e2e
def test_browser_direct_fixture_reaches_the_local_web(browser_direct: BrowserContext) -> None:
    page = browser_direct.new_page()
    page.goto("https://taskflow.test/plan/team")
    assert page.locator("h1.product-title").inner_text() == "Team"
    assert page.get_by_role("button", name="Choose plan").is_visible()
    page.close()
