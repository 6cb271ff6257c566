"""The one URL-pattern language of the project, shared with the extension (`extension/urlpattern.js`).

A pattern is matched against a URL with its scheme and fragment removed (`host[:port]/path?query`),
case-insensitively and as a whole. `*` matches any run of characters (none included, `/` included),
`?` exactly one character; every other character stands for itself (no `[...]` classes). The same
language covers host globs (`*.test`), page rules (`pizzapalace.test/checkout*`), completion checks
and task-id selectors. `tests/data/url_patterns.json` is the table of cases both implementations run.
"""

from __future__ import annotations

import re
from functools import lru_cache


def strip_url(url: str) -> str:
    """The part of a URL a pattern sees: no scheme, no fragment."""
    return url.split("#", 1)[0].split("://", 1)[-1]


@lru_cache(maxsize=1024)
def _compile(pattern: str) -> re.Pattern[str]:
    body = "".join(".*" if ch == "*" else "." if ch == "?" else re.escape(ch) for ch in pattern)
    return re.compile(body, re.IGNORECASE | re.DOTALL)


def glob_matches(pattern: str, text: str) -> bool:
    """`text` matches `pattern` as a whole, case ignored (hosts, ids: no URL stripping)."""
    return _compile(pattern).fullmatch(text) is not None


def url_matches(pattern: str, url: str) -> bool:
    """`url` (scheme and fragment dropped) matches `pattern`."""
    return glob_matches(pattern, strip_url(url))
