"""Which of a page's links the generic crawl follows, in what order, and which one opens the cart.

The facts about each link (where it points, its accessible name, whether it sits in a product card
or in the site's chrome) come from the page through the semantic anchors; the words that sort them
are data (`recorder/crawl-vocabulary.yaml`).
"""

from __future__ import annotations

import re
from functools import cached_property
from pathlib import Path
from typing import Literal
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from pydantic import Field

from susbench.core.loading import load_model
from susbench.core.models import Frozen

VOCABULARY_FILE = Path(__file__).with_name("crawl-vocabulary.yaml")
SECOND_LEVEL = frozenset({"co", "com", "org", "net", "ac", "gov", "edu", "ne", "or", "gob", "gv"})
TRACKING = re.compile(r"^(?:utm_[a-z]+|gclid|fbclid|msclkid|mc_eid|_ga)$", re.IGNORECASE)


class LinkWords(Frozen):
    names: dict[str, tuple[str, ...]] = Field(default_factory=dict, description="language -> name prefixes")
    paths: tuple[str, ...] = Field(default=(), description="path prefixes")
    patterns: tuple[str, ...] = Field(default=(), description="regular expressions over path and query")


class CrawlVocabulary(Frozen):
    slack: int = Field(ge=0, le=80, description="characters a name may have beyond its phrase")
    cart: LinkWords
    skip: LinkWords
    product: LinkWords


def load_crawl_vocabulary(path: Path = VOCABULARY_FILE) -> CrawlVocabulary:
    return load_model(path, CrawlVocabulary)


class PageLink(Frozen):
    """One `a[href]` of a page as the crawl's page script reports it."""

    url: str = Field(description="absolute, as the browser resolved it")
    name: str = Field(default="", description="accessible name, shortened")
    card: bool = Field(default=False, description="inside a product card of the page's product grid")
    chrome: bool = Field(default=False, description="inside navigation or the page's banner header")
    footer: bool = False
    shown: bool = Field(default=True, description="rendered with a size")


LinkKind = Literal["follow", "cart", "skip"]


def site_of(host: str) -> str:
    """The registrable part of a host name, near enough without the public suffix list:
    `www.shop.co.uk` -> `shop.co.uk`, `m.bazaarly.test` -> `bazaarly.test`."""
    labels = host.lower().rstrip(".").split(".")
    keep = 3 if len(labels) >= 3 and labels[-2] in SECOND_LEVEL and len(labels[-1]) == 2 else 2
    return ".".join(labels[-keep:])


def same_site(url: str, other: str) -> bool:
    return site_of(urlsplit(url).hostname or "") == site_of(urlsplit(other).hostname or "")


def canonical(url: str) -> str:
    """A URL as the crawl remembers it: no fragment, no tracking parameters."""
    parts = urlsplit(url)
    kept = [(key, value) for key, value in parse_qsl(parts.query, True) if not TRACKING.match(key)]
    return urlunsplit((parts.scheme, parts.netloc.lower(), parts.path or "/", urlencode(kept), ""))


def _bare(text: str) -> str:
    squeezed = re.sub(r"\s+", " ", text).strip().lower()
    return re.sub(r"^[\W_]+|[\W_]+$", "", squeezed)


class LinkJudge:
    """Sorts a page's links: skipped, the cart, or followed with a score (higher first)."""

    def __init__(self, vocabulary: CrawlVocabulary) -> None:
        self.vocabulary = vocabulary

    @cached_property
    def _names(self) -> dict[str, re.Pattern[str]]:
        return {
            kind: re.compile(
                "^(?:"
                + "|".join(re.escape(_bare(phrase)) for phrases in words.names.values() for phrase in phrases)
                + r")(?!\w)"
            )
            for kind, words in (("cart", self.vocabulary.cart), ("skip", self.vocabulary.skip))
        }

    @cached_property
    def _patterns(self) -> dict[str, re.Pattern[str]]:
        vocabulary = self.vocabulary
        return {
            kind: re.compile("|".join(f"(?:{p})" for p in words.patterns) or r"(?!)", re.IGNORECASE)
            for kind, words in (("skip", vocabulary.skip), ("product", vocabulary.product))
        }

    def _named(self, kind: str, name: str) -> bool:
        bare = _bare(name)
        found = self._names[kind].match(bare)
        return bool(found and len(bare) - found.end() <= self.vocabulary.slack)

    @staticmethod
    def _under(path: str, prefixes: tuple[str, ...]) -> bool:
        lowered = path.lower()
        return any(lowered == p or lowered.startswith(p.rstrip("/") + "/") for p in prefixes)

    def is_cart(self, link: PageLink) -> bool:
        path = urlsplit(link.url).path
        return self._named("cart", link.name) or self._under(path, self.vocabulary.cart.paths)

    def kind(self, link: PageLink, page_url: str) -> LinkKind:
        parts = urlsplit(link.url)
        if parts.scheme not in ("http", "https") or not same_site(link.url, page_url):
            return "skip"
        if canonical(link.url) == canonical(page_url):
            return "skip"
        if self.is_cart(link):
            return "cart"
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        skip = self.vocabulary.skip
        if link.footer or self._named("skip", link.name) or self._under(parts.path, skip.paths):
            return "skip"
        if self._patterns["skip"].search(target):
            return "skip"
        return "follow"

    def score(self, link: PageLink) -> int:
        """3: a product card; 2: a product-like path; 1: the page's content; 0: its navigation."""
        parts = urlsplit(link.url)
        if link.card:
            return 3
        if self._patterns["product"].search(parts.path + (f"?{parts.query}" if parts.query else "")):
            return 2
        return 0 if link.chrome else 1
