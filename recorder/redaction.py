"""Masking of secrets in what a recording writes: credentials, cookie values, token parameters.

The names are data (`recorder/secrets.yaml`). Only values are replaced; names, order and the
URL's shape stay, so a masked URL is still what the replayer matches a live request against: its
canonical layer (`replayer/rules.yaml`) drops those parameters whatever their value.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import unquote_plus

from pydantic import Field

from susbench.core.loading import load_model
from susbench.core.models import Frozen

SECRETS_PATH = Path(__file__).with_name("secrets.yaml")
HeaderFields = tuple[tuple[bytes, bytes], ...]


class SecretNames(Frozen):
    """`recorder/secrets.yaml`: which headers and parameters hold secrets."""

    mask: str = Field(default="REDACTED", pattern=r"^[A-Za-z0-9_-]+$")
    credential_headers: tuple[str, ...] = ()
    cookie_headers: tuple[str, ...] = ()
    set_cookie_headers: tuple[str, ...] = ()
    url_headers: tuple[str, ...] = ()
    query_params: tuple[str, ...] = ()
    path_params: tuple[str, ...] = ()


def _lower(names: Iterable[str]) -> frozenset[str]:
    return frozenset(name.lower() for name in names)


class Redactor:
    """Masks secret values in URLs and header lists."""

    def __init__(self, names: SecretNames) -> None:
        self.mask = names.mask
        self._credentials = _lower(names.credential_headers)
        self._cookies = _lower(names.cookie_headers)
        self._set_cookies = _lower(names.set_cookie_headers)
        self._urls = _lower(names.url_headers)
        self._query = _lower(names.query_params)
        alternatives = "|".join(re.escape(name) for name in names.path_params)
        self._path_param = (
            re.compile(rf";({alternatives})=[^/;?#]*", re.IGNORECASE) if names.path_params else None
        )

    @classmethod
    def load(cls, path: Path = SECRETS_PATH) -> Redactor:
        return cls(load_model(path, SecretNames))

    def url(self, url: str) -> str:
        """`url` (absolute, or a path with its query) with secret parameter values masked."""
        head, mark, rest = url.partition("?")
        if self._path_param is not None:
            head = self._path_param.sub(lambda found: f";{found.group(1)}={self.mask}", head)
        if not mark:
            return head
        query, hash_mark, fragment = rest.partition("#")
        masked = "&".join(self._parameter(part) for part in query.split("&"))
        return f"{head}?{masked}{hash_mark}{fragment}"

    def _parameter(self, part: str) -> str:
        name, equals, value = part.partition("=")
        if equals and value and unquote_plus(name).strip().lower() in self._query:
            return f"{name}={self.mask}"
        return part

    def header(self, name: str, value: str) -> str:
        key = name.lower()
        if key in self._credentials:
            scheme, space, _ = value.strip().partition(" ")
            return f"{scheme} {self.mask}" if space and scheme.isalpha() else self.mask
        if key in self._cookies:
            return "; ".join(self._cookie(part) for part in value.split(";") if part.strip())
        if key in self._set_cookies:
            cookie, semicolon, attributes = value.partition(";")
            return self._cookie(cookie) + semicolon + attributes
        if key in self._urls:
            return self.url(value)
        return value

    def _cookie(self, pair: str) -> str:
        name, equals, _ = pair.strip().partition("=")
        return f"{name}={self.mask}" if equals else self.mask

    def headers(self, fields: HeaderFields) -> HeaderFields:
        return tuple(
            (name, self.header(name.decode("latin-1"), value.decode("latin-1")).encode("latin-1"))
            for name, value in fields
        )
