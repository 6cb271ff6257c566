"""A site as it looks on one date with one seed: prices, order, banner, A/B variant, redesign.

Everything here is a pure function of (site, date, seed), so the same inputs give byte-identical
pages and two dates a month apart give visibly different ones. No wall clock, no process randomness.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import date as Date
from functools import cached_property
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: `--help` reads DEFAULT_DATE without the site catalog's models
    from susbench.web.catalog import Product, SiteSpec

# The local web's date when none is named: the bundled snapshot's, so `web serve`, `apps serve`,
# `run --live` and `drift --live` without a date serve the pages the docs' examples show.
DEFAULT_DATE = Date(2026, 11, 29)

ANATOMY_BUTTON = "add-to-cart-btn"
ANATOMY_CHECKOUT = "checkout-btn"


@dataclass(frozen=True)
class Edition:
    """One (site, date, seed) combination; the server renders every page from one of these."""

    spec: SiteSpec
    date: Date
    seed: int

    def unit(self, *parts: object) -> float:
        """A deterministic number in [0, 1) for the given parts (and this seed)."""
        text = "|".join(str(part) for part in (self.seed, self.spec.host, *parts))
        return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") / 2**64

    @cached_property
    def week(self) -> str:
        year, week, _ = self.date.isocalendar()
        return f"{year}-W{week:02d}"

    @cached_property
    def redesigned(self) -> bool:
        """After the site's drift date a few elements are renamed or moved."""
        return self.date >= Date.fromisoformat(self.spec.drift_date)

    @cached_property
    def variant(self) -> str:
        """A/B layout bucket, re-drawn every day."""
        return "b" if self.unit("variant", self.date) >= 0.5 else "a"

    @cached_property
    def banner(self) -> str:
        """The campaign of the month (rotates with the month, shifted by the seed)."""
        banners = self.spec.banners
        return banners[(self.date.month + self.date.year * 12 + self.seed) % len(banners)]

    @property
    def button_class(self) -> str:
        return self.spec.drift.button if self.redesigned else ANATOMY_BUTTON

    @property
    def checkout_class(self) -> str:
        return self.spec.drift.checkout if self.redesigned else ANATOMY_CHECKOUT

    @property
    def search_in_main(self) -> bool:
        return self.redesigned and self.spec.drift.search == "main"

    def price(self, product: Product) -> float:
        """Weekly price: the base moved by up to ±12%, ending in .99 (or whole for zero-priced)."""
        if product.price == 0:
            return 0.0
        factor = 0.88 + 0.24 * self.unit("price", self.week, product.slug)
        value = product.price * factor
        if product.price < 5:
            return round(value, 2)
        return max(round(value) - 0.01, 0.99)

    def was_price(self, product: Product) -> float | None:
        """A struck-through 'was' price for about a third of the products, by week."""
        if product.price == 0 or self.unit("sale", self.week, product.slug) > 0.35:
            return None
        return round(self.price(product) * 1.25 + 0.5) - 0.01

    def products(self) -> list[Product]:
        """Products in today's ranking order."""
        return sorted(self.spec.products, key=lambda p: self.unit("rank", self.date, p.slug))

    def stock(self, product: Product) -> int:
        """Units left today (0..40), used by the JSON stock API."""
        return int(self.unit("stock", self.date, product.slug) * 40)

    def rating(self, product: Product) -> tuple[float, int]:
        """Average stars and review count; stable across dates for a seed."""
        average = round(3.8 + 1.2 * self.unit("stars", product.slug), 1)
        count = 12 + int(self.unit("reviews", product.slug) * 2400)
        return average, count

    def money(self, value: float) -> str:
        if value == 0:
            return "Free"
        return f"{self.spec.currency}{value:,.2f}"
