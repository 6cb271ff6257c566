"""Short user flows on the local web that pages with an injection need before they show it."""

from __future__ import annotations

from urllib.parse import urlsplit

from playwright.sync_api import Page

from susbench.core.models import Injection
from susbench.web.app import SESSION_COOKIE
from susbench.web.catalog import specs

PAGES_NEEDING_A_CART = ("/cart", "/checkout")
# Where an injection that fits any site (a generic one, without an example) is shown on the local web.
GENERIC_EXAMPLE = "https://voltcart.test/item/aero-14-laptop"


def fill_cart(page: Page, host: str) -> None:
    """Put the site's first priced item into an empty cart, so /cart and /checkout show their real
    content, and the same content however often a browser did it before (the pattern's place on the
    page does not drift down a line per earlier visit)."""
    page.context.clear_cookies(name=SESSION_COOKIE, domain=host)
    spec = specs()[host]
    product = next((item for item in spec.products if item.price > 0), spec.products[0])
    page.goto(f"https://{host}/{spec.detail}/{product.slug}")
    page.locator("form.add-to-cart [type=submit]").first.click()
    page.wait_for_load_state()


def needs_cart(injection: Injection) -> bool:
    return urlsplit(injection.page.example or "").path in PAGES_NEEDING_A_CART


def open_example(page: Page, injection: Injection, prepared: bool = False) -> None:
    """Open the injection's example page, filling the cart first where the page needs one (unless
    `prepared` says the caller already did, before the episode started)."""
    if not prepared and needs_cart(injection):
        fill_cart(page, injection.site)
    if injection.site == "*":
        page.goto(injection.page.example or GENERIC_EXAMPLE)
    else:
        page.goto(injection.page.example or f"https://{injection.site}/")
