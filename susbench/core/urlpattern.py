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
def _compile(pattern: str) -> tuple[tuple[re.Pattern[str], int], ...]:
    """The fixed-length pieces between the `*`s, each with its length (`?` is one character)."""
    return tuple(
        (
            re.compile(
                "".join("." if ch == "?" else re.escape(ch) for ch in piece), re.IGNORECASE | re.DOTALL
            ),
            len(piece),
        )
        for piece in pattern.split("*")
    )


def glob_matches(pattern: str, text: str) -> bool:
    """`text` matches `pattern` as a whole, case ignored (hosts, ids: no URL stripping).

    The first piece must match at the start, the last at the end, and each piece between at its
    leftmost place after the previous one: that is exact for `*` globs, and linear in `text`
    where a regex of `.*`s backtracks for minutes on a pattern like `*a*a*c`.
    """
    pieces = _compile(pattern)
    if len(pieces) == 1:
        return pieces[0][0].fullmatch(text) is not None
    (first, first_length), *middle, (last, last_length) = pieces
    tail = len(text) - last_length
    if tail < first_length or not first.match(text) or not last.fullmatch(text, tail):
        return False
    position = first_length
    for piece, _ in middle:
        found = piece.search(text, position, tail)
        if found is None:
            return False
        position = found.end()
    return True


def url_matches(pattern: str, url: str) -> bool:
    """`url` (scheme and fragment dropped) matches `pattern`."""
    return glob_matches(pattern, strip_url(url))
