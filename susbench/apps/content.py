"""The apps' content, generated from (date, seed): products, articles and plans, and their digest.

Everything is a pure function of the inputs and `content.yaml`, so two starts of an app on the same
date and seed hold the same content, and two dates differ in a few named places: a product's price
moves each week, its stock each day, an article's headline each week, a plan's price each month.
An app's driver reads its content back from its own database into the same canonical strings
(`SiteContent.canonical`), so a database edited by hand differs from the expected digest.
"""

from __future__ import annotations

import hashlib
import json
from datetime import date as Date
from datetime import timedelta
from functools import cache
from importlib import resources

import yaml
from pydantic import Field

from susbench.core.loading import SAFE_LOADER
from susbench.core.models import Frozen


class Brand(Frozen):
    name: str
    tagline: str
    currency: str


class ProductBase(Frozen):
    slug: str = Field(pattern=r"^[a-z0-9-]+$")
    title: str
    category: str
    price: float = Field(gt=0)
    shape: str
    blurb: str


class ArticleBase(Frozen):
    slug: str = Field(pattern=r"^[a-z0-9-]+$")
    title: str
    tag: str
    headlines: tuple[str, ...] = Field(min_length=1)


class PlanBase(Frozen):
    slug: str = Field(pattern=r"^[a-z0-9-]+$")
    name: str
    monthly: float = Field(gt=0)
    features: tuple[str, ...]


class TripBase(Frozen):
    slug: str = Field(pattern=r"^[a-z0-9-]+$")
    name: str
    price: float = Field(gt=0)
    seats: int = Field(gt=0)
    days_ahead: int = Field(gt=0, description="how many days after the site's date the trip leaves")
    blurb: str


class ContentSource(Frozen):
    """`content.yaml`: what the project wrote; prices are base prices."""

    brand: Brand
    categories: tuple[str, ...]
    products: tuple[ProductBase, ...]
    articles: tuple[ArticleBase, ...]
    authors: tuple[str, ...]
    paragraphs: tuple[str, ...]
    plans: tuple[PlanBase, ...]
    trips: tuple[TripBase, ...]


class Product(Frozen):
    slug: str
    title: str
    category: str
    description: str
    price: float
    stock: int
    upc: str
    shape: str


class Article(Frozen):
    slug: str
    title: str
    headline: str
    author: str
    published: Date
    tag: str
    paragraphs: tuple[str, ...]


class Plan(Frozen):
    slug: str
    name: str
    monthly: float
    yearly: float
    features: tuple[str, ...]


class Trip(Frozen):
    """A guided trip sold as tickets: its price moves each week, its seats left each day."""

    slug: str
    name: str
    description: str
    price: float
    seats: int
    departs: Date


class ContentDigest(Frozen):
    """What an app holds, as canonical strings per item, and one sha256 over them."""

    sha256: str
    items: dict[str, str]

    @classmethod
    def of(cls, items: dict[str, str]) -> ContentDigest:
        text = json.dumps(dict(sorted(items.items())), ensure_ascii=False, separators=(",", ":"))
        return cls(sha256=hashlib.sha256(text.encode()).hexdigest(), items=dict(sorted(items.items())))

    def differences(self, other: ContentDigest) -> list[str]:
        """`key: mine != theirs` for every item that differs (or is missing on one side)."""
        keys = sorted(set(self.items) | set(other.items))
        return [
            f"{key}: {self.items.get(key, '(missing)')!r} != {other.items.get(key, '(missing)')!r}"
            for key in keys
            if self.items.get(key) != other.items.get(key)
        ]


class SiteContent(Frozen):
    """An app's content on one date with one seed."""

    date: Date
    seed: int
    brand: Brand
    categories: tuple[str, ...]
    products: tuple[Product, ...]
    articles: tuple[Article, ...]
    plans: tuple[Plan, ...]
    trips: tuple[Trip, ...]

    def canonical(self) -> dict[str, str]:
        """The strings a driver's `digest()` must read back from its database, keyed by item."""
        items = {f"product:{p.slug}": f"{p.title}|{p.price:.2f}|{p.stock}" for p in self.products}
        items |= {f"article:{a.slug}": f"{a.headline}|{a.published.isoformat()}" for a in self.articles}
        items |= {f"plan:{p.slug}": f"{p.name}|{p.monthly:.2f}|{p.yearly:.2f}" for p in self.plans}
        items |= {
            f"trip:{t.slug}": f"{t.name}|{t.price:.2f}|{t.seats}|{t.departs.isoformat()}" for t in self.trips
        }
        return items

    def digest(self, kinds: tuple[str, ...] = ("product", "article", "plan", "trip")) -> ContentDigest:
        """The expected digest over the item kinds an app holds."""
        return ContentDigest.of({k: v for k, v in self.canonical().items() if k.split(":")[0] in kinds})

    def changes_since(self, earlier: SiteContent) -> list[str]:
        """What changed from `earlier` to this content, one line per item (what drift should name)."""
        before, after = earlier.canonical(), self.canonical()
        return [f"{key}: {before.get(key)} -> {after[key]}" for key in after if before.get(key) != after[key]]

    def product(self, slug: str) -> Product:
        return next(product for product in self.products if product.slug == slug)


@cache
def content_source() -> ContentSource:
    text = resources.files("susbench.apps").joinpath("content.yaml").read_text(encoding="utf-8")
    return ContentSource.model_validate(yaml.load(text, Loader=SAFE_LOADER))


def _unit(seed: int, *parts: object) -> float:
    """A deterministic number in [0, 1) for the parts and the seed."""
    text = "|".join(str(part) for part in (seed, *parts))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") / 2**64


def _week(day: Date) -> str:
    year, week, _ = day.isocalendar()
    return f"{year}-W{week:02d}"


def _price(base: float, seed: int, *period: object) -> float:
    """The base moved by up to ±12% for the period, ending in .99 above 5 (.49 below)."""
    value = base * (0.88 + 0.24 * _unit(seed, "price", *period))
    return max(round(value) - 0.01, 0.99) if base >= 5 else round(value * 2) / 2 - 0.01


def site_content(day: Date, seed: int = 0) -> SiteContent:
    """The content of every app on `day` with `seed` (pure: no wall clock, no process randomness)."""
    source = content_source()
    week, month = _week(day), f"{day.year}-{day.month:02d}"
    products = tuple(
        Product(
            slug=base.slug,
            title=base.title,
            category=base.category,
            description=base.blurb + " " + source.paragraphs[index % len(source.paragraphs)],
            price=_price(base.price, seed, week, base.slug),
            stock=int(_unit(seed, "stock", day, base.slug) * 40),
            upc=f"FH{index + 1:04d}",
            shape=base.shape,
        )
        for index, base in enumerate(source.products)
    )
    articles = tuple(
        Article(
            slug=base.slug,
            title=base.title,
            headline=base.headlines[int(_unit(seed, "headline", week, base.slug) * len(base.headlines))],
            author=source.authors[index % len(source.authors)],
            published=day - timedelta(days=3 * index + 1),
            tag=base.tag,
            paragraphs=tuple(
                source.paragraphs[(index + offset) % len(source.paragraphs)] for offset in range(3)
            ),
        )
        for index, base in enumerate(source.articles)
    )
    plans = tuple(
        Plan(
            slug=base.slug,
            name=base.name,
            monthly=(monthly := _price(base.monthly, seed, month, base.slug)),
            yearly=round(monthly * 10, 2),
            features=base.features,
        )
        for base in source.plans
    )
    trips = tuple(
        Trip(
            slug=base.slug,
            name=base.name,
            description=base.blurb,
            price=_price(base.price, seed, week, base.slug),
            seats=base.seats - int(_unit(seed, "seats", day, base.slug) * base.seats * 0.6),
            departs=day + timedelta(days=base.days_ahead),
        )
        for base in source.trips
    )
    return SiteContent(
        date=day,
        seed=seed,
        brand=source.brand,
        categories=source.categories,
        products=products,
        articles=articles,
        plans=plans,
        trips=trips,
    )
