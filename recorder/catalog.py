"""A catalog of target sites (`sites/*.yaml`) as typed models: what `record --catalog` records.

Every entry names a start URL, a category, the country and locale it is recorded in, and either a
hand-written capture plan or crawl settings for the generic crawl. The catalog's own defaults say
how politely its sites are recorded.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from zoneinfo import available_timezones

from pydantic import Field, ValidationError, field_validator, model_validator

from susbench.core.errors import InputError, SusbenchError
from susbench.core.loading import describe_validation_error, read_data_file
from susbench.core.models import CapturePlan, Frozen, Identifier, SiteCategory
from susbench.core.urlpattern import glob_matches

SITE_CATEGORIES: tuple[str, ...] = SiteCategory.__args__  # type: ignore[attr-defined]


class CrawlSettings(Frozen):
    """How the generic crawl walks a site that has no hand-written plan."""

    depth: int = Field(default=2, ge=0, le=6, description="links followed away from the start page")
    pages: int = Field(default=20, ge=1, le=500, description="pages kept at most, cart and checkout included")
    cart: bool = Field(
        default=True, description="then add a product to the cart with its own button, open cart and checkout"
    )
    scroll: bool = Field(default=True, description="scroll every page to the bottom (lazy parts load)")
    idle_ms: int = Field(default=500, ge=0, le=30_000, description="extra settle time per page")

    @classmethod
    def parse(cls, text: str, source: str = "--crawl") -> CrawlSettings:
        """`depth=2,pages=20` (any field, comma-separated), checked as the model checks YAML."""
        values: dict[str, str] = {}
        for part in filter(None, (piece.strip() for piece in text.split(","))):
            key, equals, value = part.partition("=")
            if not equals or not key.strip():
                raise InputError(f"{source}: {part!r}: expected KEY=VALUE, e.g. depth=2,pages=20")
            values[key.strip()] = value.strip()
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            raise InputError(describe_validation_error(source, exc)) from None


class Politeness(Frozen):
    """How gently a catalog's sites are recorded."""

    rate: float = Field(default=2.0, gt=0, le=1000, description="requests per second per host")
    burst: int = Field(default=8, ge=1, le=1000, description="requests a host may get at once first")
    page_delay_s: float = Field(
        default=2.0, ge=0, le=300, description="pause between two pages of a site (robots.txt may ask more)"
    )
    concurrency: int = Field(default=2, ge=1, le=32, description="sites recorded at the same time")
    contact: str = Field(
        default="", max_length=200, description="who records (a URL or e-mail), named in the User-Agent"
    )


class CatalogSite(Frozen):
    """One site to record."""

    id: Identifier
    name: str = Field(min_length=1)
    category: SiteCategory
    start_url: str
    country: str = Field(pattern=r"^[A-Z]{2}$", description="ISO 3166-1 alpha-2, e.g. DE")
    locale: str = Field(
        pattern=r"^[a-z]{2,3}(-[A-Z][a-z]{3})?(-([A-Z]{2}|\d{3}))?$", description="BCP 47, e.g. de-DE"
    )
    timezone: str = Field(description="IANA time zone, e.g. Europe/Berlin")
    plan: CapturePlan | None = Field(default=None, description="a hand-written capture plan (id: the site's)")
    crawl: CrawlSettings | None = Field(default=None, description="settings of the generic crawl")

    @model_validator(mode="before")
    @classmethod
    def _plan_named_after_the_site(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("plan"), dict) and "id" not in data["plan"]:
            return {**data, "plan": {"id": data.get("id"), **data["plan"]}}
        return data

    @field_validator("start_url")
    @classmethod
    def _http_url(cls, url: str) -> str:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("expected an http(s) URL with a host, e.g. https://www.example.com/")
        return url

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, zone: str) -> str:
        if zone not in _zones():
            raise ValueError("expected an IANA time zone, e.g. Europe/Berlin or America/New_York")
        return zone

    @model_validator(mode="after")
    def _plan_or_crawl(self) -> CatalogSite:
        if (self.plan is None) == (self.crawl is None):
            raise ValueError("give either 'plan' (a capture plan) or 'crawl' (crawl settings), not both")
        return self

    @property
    def host(self) -> str:
        return urlsplit(self.start_url).hostname or ""


class SiteCatalog(Frozen):
    """A catalog file: politeness settings and the sites."""

    description: str = ""
    politeness: Politeness = Politeness()
    sites: tuple[CatalogSite, ...] = Field(min_length=1)

    @field_validator("sites")
    @classmethod
    def _unique_ids(cls, sites: tuple[CatalogSite, ...]) -> tuple[CatalogSite, ...]:
        seen: set[str] = set()
        for site in sites:
            if site.id in seen:
                raise ValueError(f"site id {site.id!r} is used twice; every site needs its own")
            seen.add(site.id)
        return sites

    def select(self, selector: str) -> list[CatalogSite]:
        """`all`, site ids, categories or globs over ids, comma-separated; catalog order kept."""
        chosen: set[str] = set()
        for part in filter(None, (piece.strip() for piece in selector.split(","))):
            matched = [
                site.id
                for site in self.sites
                if part in ("all", site.category) or site.id == part or glob_matches(part, site.id)
            ]
            if not matched:
                raise SusbenchError(
                    f"--sites {part!r} matches no site of the catalog; expected 'all', an id "
                    f"(e.g. {self.sites[0].id}), a category ({', '.join(SITE_CATEGORIES)}) or a glob over ids"
                )
            chosen.update(matched)
        if not chosen:
            raise SusbenchError("--sites is empty; expected 'all', ids, categories or globs")
        return [site for site in self.sites if site.id in chosen]


@cache
def _zones() -> frozenset[str]:
    return frozenset(available_timezones())


def load_site_catalog(path: Path) -> SiteCatalog:
    """Read and check a catalog file; errors name file, field and site: `sites.3 (bol-nl).locale`."""
    data = read_data_file(path)
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a mapping with 'sites', got {type(data).__name__}")
    try:
        return SiteCatalog.model_validate(data)
    except ValidationError as exc:
        entries = data.get("sites") if isinstance(data.get("sites"), list) else []

        def named(match: re.Match[str]) -> str:
            index = int(match.group(1))
            entry = entries[index] if index < len(entries) else None
            site = entry.get("id") if isinstance(entry, dict) else None
            return f"field 'sites.{index}" + (f" ({site})" if site else "")

        message = describe_validation_error(str(path), exc)
        raise InputError(re.sub(r"field 'sites\.(\d+)", named, message)) from None
