"""What the generic crawl may open (robots.txt as RFC 9309 reads it) and which links it follows."""

from __future__ import annotations

import pytest

from susbench.recorder.links import LinkJudge, PageLink, canonical, load_crawl_vocabulary, site_of
from susbench.recorder.robots import RobotsBook, parse_robots

ROBOTS = """
User-agent: Googlebot
Disallow: /

User-agent: *
Disallow: /cart
Disallow: /*.pdf$
Allow: /cart/share
Crawl-delay: 4

User-agent: SusbenchReplay/1.0
User-agent: otherbot
Disallow: /private/
Allow: /private/open$
Crawl-delay: 2.5
"""


def test_our_own_group_wins_over_the_star_group() -> None:
    policy = parse_robots("https://shop.example", ROBOTS)
    assert policy.crawl_delay_s == 2.5
    assert policy.allows("https://shop.example/cart")
    assert not policy.allows("https://shop.example/private/page")
    assert policy.allows("https://shop.example/private/open")
    assert not policy.allows("https://shop.example/private/open/more")


def test_star_group_longest_match_and_wildcards() -> None:
    policy = parse_robots("https://shop.example", ROBOTS, agent="nobody")
    assert policy.crawl_delay_s == 4
    assert not policy.allows("https://shop.example/cart?id=1")
    assert policy.allows("https://shop.example/cart/share")
    assert not policy.allows("https://shop.example/docs/terms.pdf")
    assert policy.allows("https://shop.example/docs/terms.pdf?v=2")
    assert policy.allows("https://shop.example/robots.txt")


@pytest.mark.parametrize(
    ("status", "state", "allowed"),
    [
        (200, "parsed", False),
        (404, "unavailable", True),
        (503, "unreachable", False),
        (0, "unreachable", False),
    ],
)
def test_status_codes_as_rfc_9309_says(status: int, state: str, allowed: bool) -> None:
    fetched: list[str] = []

    def fetch(url: str) -> tuple[int, bytes]:
        fetched.append(url)
        return status, b"User-agent: *\nDisallow: /a\n"

    book = RobotsBook(fetch)
    assert book.policy("https://shop.example/a/b").state == state
    assert book.allows("https://shop.example/a/b") is allowed
    assert fetched == ["https://shop.example/robots.txt"], "fetched once per origin"
    assert RobotsBook(fetch, ignore=True).allows("https://other.example/a")
    assert len(fetched) == 1, "--ignore-robots does not even ask"


def _link(url: str, **facts: object) -> PageLink:
    return PageLink.model_validate({"url": url, **facts})


def test_links_sorted_into_cart_skip_and_follow_with_scores() -> None:
    judge = LinkJudge(load_crawl_vocabulary())
    here = "https://www.laden.de/start"
    assert judge.kind(_link("https://www.laden.de/korb", name="Zum Warenkorb"), here) == "cart"
    assert judge.kind(_link("https://www.laden.de/basket"), here) == "cart"
    assert judge.kind(_link("https://www.laden.de/konto", name="Mein Konto"), here) == "skip"
    assert judge.kind(_link("https://www.laden.de/checkout/start"), here) == "skip"
    assert judge.kind(_link("https://www.laden.de/katalog.pdf"), here) == "skip"
    assert judge.kind(_link("https://other.example/x"), here) == "skip"
    assert judge.kind(_link("https://www.laden.de/impressum", footer=True), here) == "skip"
    assert judge.kind(_link("https://www.laden.de/start#top"), here) == "skip"
    assert judge.kind(_link("https://m.laden.de/schuhe"), here) == "follow"
    card = _link("https://www.laden.de/x", card=True)
    product = _link("https://www.laden.de/p/wanderschuh-alpin-grat-42")
    chrome = _link("https://www.laden.de/angebote", chrome=True)
    content = _link("https://www.laden.de/angebote")
    assert [judge.score(link) for link in (card, product, content, chrome)] == [3, 2, 1, 0]


def test_site_and_canonical_forms() -> None:
    assert site_of("www.shop.co.uk") == "shop.co.uk"
    assert site_of("m.bazaarly.test") == "bazaarly.test"
    assert canonical("https://Shop.example/a?utm_source=x&id=2#frag") == "https://shop.example/a?id=2"
