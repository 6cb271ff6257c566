"""The site catalog (catalog.yaml) as typed models, and the public `SITES` tuple built from it.

Catalog data lives in YAML so adding a product or a site never touches the rendering code.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Literal

import yaml
from pydantic import Field

from susbench.core.loading import SAFE_LOADER
from susbench.core.models import Frozen, Site, SiteCategory


class Font(Frozen):
    """A brand font: the CSS family name and installed TTF files tried in order."""

    family: str
    files: tuple[str, ...]
    fallback: str


class Colors(Frozen):
    primary: str
    accent: str
    dark: str
    light: str


class Look(Frozen):
    """How a site is laid out and styled, beyond its font and colours: the defaults are the first
    eight sites' look. Each choice is a body class styled by site.css, so markup stays one anatomy."""

    header: Literal["bar", "centered", "stacked", "inverse"] = "bar"
    grid: Literal["cards", "list", "tiles", "compact"] = "cards"
    buttons: Literal["solid", "outline", "pill", "square", "caps"] = "solid"
    scheme: Literal["light", "dark", "tinted"] = "light"
    hero: Literal["split", "banner", "minimal"] = "split"
    detail: Literal["columns", "reversed", "stacked"] = "columns"
    radius: int | None = Field(default=None, ge=0, le=24)
    text_size: int = Field(default=15, ge=13, le=18)
    width: int = Field(default=1240, ge=960, le=1440)

    def classes(self) -> str:
        return " ".join(
            f"look-{name}-{value}"
            for name, value in (
                ("header", self.header),
                ("grid", self.grid),
                ("buttons", self.buttons),
                ("scheme", self.scheme),
                ("hero", self.hero),
                ("detail", self.detail),
            )
        )


class Product(Frozen):
    """One thing a site sells (or, for the news site, one article)."""

    slug: str = Field(pattern=r"^[a-z0-9-]+$")
    name: str
    price: float = Field(ge=0)
    shape: str
    seller: str
    blurb: str
    city: str = ""
    period: str = ""


class DriftRenames(Frozen):
    """What a site's redesign after `drift_date` changes: class names and the search form's place."""

    button: str
    checkout: str
    search: Literal["header", "main"]


class Plan(Frozen):
    """The subscription a news site sells from its paywall."""

    slug: str
    name: str
    price: float
    period: str


class SiteSpec(Frozen):
    """Everything the template engine needs to render one site."""

    host: str
    name: str
    category: SiteCategory
    tagline: str
    kind: Literal["shop", "news", "plans"]
    detail: Literal["item", "hotel", "trip", "article", "plan"]
    button: str
    currency: str
    font: Font
    colors: Colors
    nav: tuple[str, ...]
    banners: tuple[str, ...] = Field(min_length=4)
    drift_date: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")
    drift: DriftRenames
    products: tuple[Product, ...] = Field(min_length=4)
    sizes: tuple[str, ...] = ()
    plan: Plan | None = None
    look: Look = Look()

    def product(self, slug: str) -> Product | None:
        return next((product for product in self.products if product.slug == slug), None)

    def as_site(self) -> Site:
        return Site(
            host=self.host,
            name=self.name,
            category=self.category,
            start_url=f"https://{self.host}/",
            description=self.tagline,
        )


class Catalog(Frozen):
    reviewers: tuple[str, ...] = Field(min_length=3)
    reviews: dict[str, tuple[tuple[str, str], ...]]
    sites: tuple[SiteSpec, ...] = Field(min_length=8)

    def review_texts(self, category: str) -> tuple[tuple[str, str], ...]:
        """(title, body) pairs that fit the category's kind of product."""
        return self.reviews.get(category) or self.reviews["default"]


@cache
def load_catalog() -> Catalog:
    """Parse and validate the packaged catalog once per process."""
    text = resources.files("susbench.web").joinpath("catalog.yaml").read_text(encoding="utf-8")
    return Catalog.model_validate(yaml.load(text, Loader=SAFE_LOADER))


def specs() -> dict[str, SiteSpec]:
    """Site specs by hostname."""
    return {spec.host: spec for spec in load_catalog().sites}


SITES: tuple[Site, ...] = tuple(spec.as_site() for spec in load_catalog().sites)
