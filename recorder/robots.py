"""robots.txt as RFC 9309 reads it: which pages of a site the generic crawl may open.

Python's `urllib.robotparser` lets the first matching rule win and knows no `*` or `$`; RFC 9309
(and every big crawler) takes the longest match, lets `allow` win a tie and has both wildcards.
Status codes as the RFC says: 2xx is parsed, 4xx means no rules ("unavailable"), 5xx or no answer
means the whole site is off limits ("unreachable").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import cached_property
from typing import Literal
from urllib.parse import urlsplit

from pydantic import Field

from susbench.core.models import Frozen

PRODUCT_TOKEN = "SusbenchReplay"
MAX_BYTES = 500 * 1024  # RFC 9309: at least 500 KiB are parsed

RobotsState = Literal["parsed", "unavailable", "unreachable", "ignored"]


class RobotsRule(Frozen):
    allow: bool
    pattern: str = Field(description="a path pattern; `*` matches any characters, a final `$` the end")

    @cached_property
    def _regex(self) -> re.Pattern[str]:
        anchored = self.pattern.endswith("$")
        body = self.pattern[:-1] if anchored else self.pattern
        return re.compile(".*".join(re.escape(part) for part in body.split("*")) + ("$" if anchored else ""))

    def matches(self, path: str) -> bool:
        return self._regex.match(path) is not None


class RobotsPolicy(Frozen):
    """The rules of one site's robots.txt that apply to this crawler (its group, else `*`)."""

    origin: str = Field(description="scheme://host[:port] the rules belong to")
    state: RobotsState
    rules: tuple[RobotsRule, ...] = ()
    crawl_delay_s: float | None = Field(default=None, ge=0)

    def allows(self, url: str) -> bool:
        if self.state == "unreachable":
            return False
        parts = urlsplit(url)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        if parts.path == "/robots.txt":
            return True
        matching = [rule for rule in self.rules if rule.matches(path)]
        if not matching:
            return True
        best = max(matching, key=lambda rule: (len(rule.pattern), rule.allow))
        return best.allow


def parse_robots(origin: str, text: str, agent: str = PRODUCT_TOKEN) -> RobotsPolicy:
    """The group for `agent` (all such groups merged), else the `*` groups, else no rules."""
    groups: list[tuple[list[str], list[RobotsRule], list[float]]] = []
    in_agents = False
    for raw in text[:MAX_BYTES].splitlines():
        line = raw.split("#", 1)[0].strip()
        key, colon, value = line.partition(":")
        if not colon:
            continue
        key, value = key.strip().lower(), value.strip()
        if key == "user-agent":
            if not in_agents:
                groups.append(([], [], []))
            groups[-1][0].append(value.split("/", 1)[0].strip().lower())
            in_agents = True
            continue
        in_agents = False
        if not groups:
            continue
        if key in ("allow", "disallow") and value:
            groups[-1][1].append(RobotsRule(allow=key == "allow", pattern=value))
        elif key == "crawl-delay":
            try:
                groups[-1][2].append(max(0.0, float(value)))
            except ValueError:
                continue
    chosen = [group for group in groups if agent.lower() in group[0]] or [
        group for group in groups if "*" in group[0]
    ]
    rules = tuple(rule for group in chosen for rule in group[1])
    delays = [delay for group in chosen for delay in group[2]]
    return RobotsPolicy(origin=origin, state="parsed", rules=rules, crawl_delay_s=max(delays, default=None))


Fetch = Callable[[str], tuple[int, bytes]]
"""GET a URL: (status, body); status 0 when no answer came."""


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def fetch_robots(url: str, fetch: Fetch) -> RobotsPolicy:
    """The policy of `url`'s origin, read from its /robots.txt with `fetch`."""
    origin = origin_of(url)
    status, body = fetch(f"{origin}/robots.txt")
    if 200 <= status < 300:
        return parse_robots(origin, body.decode("utf-8", "replace"))
    if 400 <= status < 500:
        return RobotsPolicy(origin=origin, state="unavailable")
    return RobotsPolicy(origin=origin, state="unreachable")


class RobotsBook:
    """Policies per origin, fetched once each; `ignore` answers yes to everything (`--ignore-robots`)."""

    def __init__(self, fetch: Fetch, ignore: bool = False) -> None:
        self._fetch = fetch
        self._ignore = ignore
        self._policies: dict[str, RobotsPolicy] = {}

    def policy(self, url: str) -> RobotsPolicy:
        origin = origin_of(url)
        if self._ignore:
            return RobotsPolicy(origin=origin, state="ignored")
        if origin not in self._policies:
            self._policies[origin] = fetch_robots(url, self._fetch)
        return self._policies[origin]

    def allows(self, url: str) -> bool:
        return self.policy(url).allows(url)

    def crawl_delay_s(self, urls: Iterable[str]) -> float:
        return max((self.policy(url).crawl_delay_s or 0.0 for url in urls), default=0.0)
