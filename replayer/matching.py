"""Layered, explainable request matching: exact → canonical (rules) → scored same-path fallback.

The index is built from CDXJ entries only (URL, method, request-body digest, capture order), so
opening a snapshot never reads a response body and memory grows with the number of records, not
their size. Every lookup is a dict access plus, for the fallback, a scan of the recorded URLs that
share the request's method, host and path.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Generic, Literal, Protocol, TypeVar
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

import yaml
from pydantic import Field, ValidationError

from susbench.core.errors import SusbenchError
from susbench.core.loading import SAFE_LOADER, describe_validation_error
from susbench.core.models import Frozen

RULES_PATH = Path(__file__).with_name("rules.yaml")
BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
DEFAULT_PORTS = {"http": 80, "https": 443}
NAMING_CACHE = 4096
"""Parameter names whose rules a Canonicalizer remembers (JSON bodies bring arbitrary names)."""

MatchKind = Literal["exact", "canonical", "fuzzy"]
Where = Literal["query", "body"]


class Rule(Frozen):
    """Drop a query parameter or body field whose name matches `param` (and value `value`)."""

    name: str
    param: str = Field(description="glob over the parameter name, case-insensitive")
    value: str | None = Field(default=None, description="regex the whole value must match")
    scope: Literal["query", "body", "both"] = Field(
        default="both", description="where it applies: the URL's query, a POST body's fields, or both"
    )

    def matches(self, key: str, value: str, where: Where) -> bool:
        return self.names(key, where) and self.fits(value)

    def names(self, key: str, where: Where) -> bool:
        """Whether `param` and `scope` cover a parameter called `key` found in `where`."""
        return self.scope in (where, "both") and fnmatch.fnmatchcase(key.lower(), self.param.lower())

    def fits(self, value: str) -> bool:
        return self.value is None or re.fullmatch(self.value, value) is not None


class RuleSet(Frozen):
    """The canonicalisation rules (`replayer/rules.yaml`)."""

    rules: tuple[Rule, ...] = ()
    path_params: tuple[str, ...] = ()
    fuzzy_min_score: float = Field(default=0.0, ge=0.0, le=1.0)

    @classmethod
    def load(cls, path: Path = RULES_PATH) -> RuleSet:
        try:
            data = yaml.load(path.read_text(encoding="utf-8"), Loader=SAFE_LOADER)
            return cls.model_validate(data)
        except OSError as exc:
            raise SusbenchError(f"{path}: cannot read matching rules: {exc.strerror}") from None
        except yaml.YAMLError as exc:
            raise SusbenchError(f"{path}: invalid YAML: {exc}") from None
        except ValidationError as exc:
            raise SusbenchError(describe_validation_error(str(path), exc)) from None

    def rule_for(self, key: str, value: str, where: Where) -> str | None:
        return next((rule.name for rule in self.naming(key, where) if rule.fits(value)), None)

    def naming(self, key: str, where: Where) -> tuple[Rule, ...]:
        """The rules, in order, that cover a parameter called `key` in `where` (whatever its value)."""
        return tuple(rule for rule in self.rules if rule.names(key, where))


class Recorded(Protocol):
    """What the index needs of a CDXJ entry (satisfied by `susbench.snapshot.IndexEntry`)."""

    @property
    def url(self) -> str: ...
    @property
    def method(self) -> str: ...
    @property
    def req_digest(self) -> str | None: ...
    @property
    def seq(self) -> int: ...
    @property
    def session(self) -> str | None: ...


EntryT = TypeVar("EntryT", bound=Recorded)


@dataclass(frozen=True, slots=True)
class Match(Generic[EntryT]):
    """Which recorded entry answers a request, and why."""

    kind: MatchKind
    entry: EntryT
    rule: str | None = None
    score: float | None = None


@dataclass(frozen=True, slots=True)
class SplitUrl:
    scheme: str
    netloc: str
    path: str
    query: str

    @property
    def base(self) -> str:
        return f"{self.scheme}://{self.netloc}{self.path}"

    @property
    def exact(self) -> str:
        return self.base + (f"?{self.query}" if self.query else "")


def split_url(url: str) -> SplitUrl:
    """Normalise the parts that never matter: scheme/host case, default port, fragment."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    netloc = host if port in (None, DEFAULT_PORTS.get(scheme)) else f"{host}:{port}"
    path = parts.path or "/"
    return SplitUrl(scheme, netloc, path, parts.query)


def exact_url(url: str) -> str:
    """The exact key of a URL (SURT-like: same resource ⇔ same key, query order kept)."""
    return split_url(url).exact


def body_digest(body: bytes) -> str:
    """sha256 of the WHOLE request body, as the recorder writes it into `req_digest`."""
    return hashlib.sha256(body).hexdigest()


def _pairs(query: str) -> list[tuple[str, str]]:
    return parse_qsl(query, keep_blank_values=True)


class Canonicalizer:
    """Applies a RuleSet to URLs and request bodies; reports which rules fired."""

    def __init__(self, rules: RuleSet) -> None:
        self.rules = rules
        names = "|".join(re.escape(name) for name in rules.path_params)
        self._path_param = re.compile(rf";(?:{names})=[^/;?]*", re.IGNORECASE) if names else None
        self._naming: dict[tuple[str, Where], tuple[Rule, ...]] = {}

    def rule_for(self, key: str, value: str, where: Where) -> str | None:
        """`RuleSet.rule_for`, each parameter name's rules found once: matching every name against
        every rule's glob was most of a canonical lookup's time (issue 48's profile)."""
        rules = self._naming.get((key, where))
        if rules is None:
            if len(self._naming) >= NAMING_CACHE:
                self._naming.clear()
            rules = self._naming[(key, where)] = self.rules.naming(key, where)
        return next((rule.name for rule in rules if rule.fits(value)), None)

    def _strip(
        self, pairs: Iterable[tuple[str, str]], fired: list[str], where: Where
    ) -> list[tuple[str, str]]:
        kept = []
        for key, value in pairs:
            rule = self.rule_for(key, value, where)
            if rule is None:
                kept.append((key, value))
            elif rule not in fired:
                fired.append(rule)
        return kept

    def url(self, url: str) -> tuple[str, list[str]]:
        """Canonical URL (rule-matched parameters dropped, the rest sorted) and rules fired."""
        parts = split_url(url)
        fired: list[str] = []
        path = parts.path
        if self._path_param is not None and ";" in path:
            stripped = self._path_param.sub("", path)
            if stripped != path:
                fired.append("session-id")
                path = stripped
        kept = sorted(self._strip(_pairs(parts.query), fired, "query"))
        query = urlencode(kept, quote_via=quote, safe="/:,") if kept else ""
        return f"{parts.scheme}://{parts.netloc}{path}" + (f"?{query}" if query else ""), fired

    def body(self, body: bytes) -> tuple[str, list[str]]:
        """Hash of the WHOLE canonical body (JSON or form fields stripped by the rules)."""
        fired: list[str] = []
        text = body.strip()
        if text[:1] in (b"{", b"["):
            try:
                document = json.loads(text)
            except (ValueError, UnicodeDecodeError):
                return body_digest(body), fired
            canonical = json.dumps(self._strip_json(document, fired), sort_keys=True, separators=(",", ":"))
            return body_digest(canonical.encode()), fired
        if text and b"=" in text and all(32 <= byte < 127 for byte in text):
            kept = sorted(self._strip(_pairs(text.decode("ascii")), fired, "body"))
            return body_digest(urlencode(kept).encode()), fired
        return body_digest(body), fired

    def _strip_json(self, value: Any, fired: list[str]) -> Any:
        if isinstance(value, dict):
            kept = {}
            for key, item in value.items():
                text = item if isinstance(item, str) else json.dumps(item)
                rule = self.rule_for(str(key), text, "body")
                if rule is None:
                    kept[key] = self._strip_json(item, fired)
                elif rule not in fired:
                    fired.append(rule)
            return kept
        if isinstance(value, list):
            return [self._strip_json(item, fired) for item in value]
        return value


def overlap_score(left: str, right: str) -> float:
    """WPR's query similarity: 2·M / T over (name, value) pairs; 1.0 when both are empty."""
    first, second = _pairs(left), _pairs(right)
    total = len(first) + len(second)
    if total == 0:
        return 1.0
    remaining = list(second)
    common = 0
    for pair in first:
        if pair in remaining:
            remaining.remove(pair)
            common += 1
    return 2 * common / total


BodyLoader = Callable[[Any], bytes | None]


@dataclass(slots=True)
class _Tables(Generic[EntryT]):
    """The three layers' lookup tables over one set of entries (a session, or the whole snapshot)."""

    exact: dict[tuple[str, str, str], list[EntryT]] = field(default_factory=lambda: defaultdict(list))
    canonical: dict[tuple[str, str], list[EntryT]] = field(default_factory=lambda: defaultdict(list))
    canonical_rules: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    by_path: dict[tuple[str, str], dict[str, list[EntryT]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(list))
    )


class ReplayIndex(Generic[EntryT]):
    """Lookup tables over the recorded entries plus the per-episode serving order.

    Entries recorded in a labelled browser session are also indexed per session: a lookup for an
    episode of that session tries the session first at each layer, then the whole snapshot, so
    repeated requests (`GET /cart`) answer with what this session's flow recorded.
    `body_loader` (optional) reads a recorded request body; it is only called lazily, for a POST
    that missed the exact layer, on the few recorded requests to the same canonical URL.
    """

    def __init__(
        self,
        entries: Iterable[EntryT],
        rules: RuleSet | None = None,
        body_loader: BodyLoader | None = None,
    ) -> None:
        self.canon = Canonicalizer(rules or RuleSet.load())
        self._body_loader = body_loader
        self._whole: _Tables[EntryT] = _Tables()
        self._sessions: dict[str, _Tables[EntryT]] = {}
        self._body_keys: dict[int, str] = {}
        self._served: dict[tuple[str | None, ...], int] = defaultdict(int)
        self.size = 0
        for entry in sorted(entries, key=lambda item: item.seq):
            self._add(entry)

    def _add(self, entry: EntryT) -> None:
        method = entry.method.upper()
        exact = exact_url(entry.url)
        digest = (entry.req_digest or "") if method in BODY_METHODS else ""
        canonical, fired = self.canon.url(entry.url)
        base = split_url(entry.url).base
        scopes = [self._whole]
        if entry.session is not None:
            scopes.append(self._sessions.setdefault(entry.session, _Tables()))
        for tables in scopes:
            tables.exact[(method, exact, digest)].append(entry)
            tables.canonical[(method, canonical)].append(entry)
            if fired:
                tables.canonical_rules.setdefault((method, canonical), fired)
            tables.by_path[(method, base)][exact].append(entry)
        self.size += 1

    def new_episode(self) -> None:
        """Forget how often each request was served, so the recording order starts afresh."""
        self._served.clear()

    def _next(self, key: tuple[str | None, ...], group: list[EntryT]) -> EntryT:
        count = self._served[key]
        self._served[key] = count + 1
        return group[min(count, len(group) - 1)]

    def _body_key(self, entry: EntryT) -> str:
        cached = self._body_keys.get(entry.seq)
        if cached is None:
            body = self._body_loader(entry) if self._body_loader is not None else None
            cached = self.canon.body(body)[0] if body is not None else (entry.req_digest or "")
            self._body_keys[entry.seq] = cached
        return cached

    def lookup(
        self, method: str, url: str, body: bytes = b"", session: str | None = None
    ) -> Match[EntryT] | None:
        """The entry that answers this request, or None (a miss).

        With `session`, each layer looks in that session's records before the whole snapshot's.
        A request no layer answers is retried with the other of http/https (as pywb, whose SURT
        keys ignore the scheme), since browsers upgrade recorded http:// URLs to https://.
        """
        scopes: list[tuple[str | None, _Tables[EntryT]]] = [(None, self._whole)]
        if session is not None and session in self._sessions:
            scopes.insert(0, (session, self._sessions[session]))
        match = self._lookup(method, url, body, scopes)
        if match is not None:
            return match
        scheme, _, rest = url.partition("://")
        other = {"http": "https", "https": "http"}.get(scheme.lower())
        if other is None:
            return None
        match = self._lookup(method, f"{other}://{rest}", body, scopes)
        if match is None:
            return None
        rule = "+".join(part for part in ("scheme", match.rule) if part)
        kind: MatchKind = "canonical" if match.kind == "exact" else match.kind
        return Match(kind, match.entry, rule=rule, score=match.score)

    def _lookup(
        self, method: str, url: str, body: bytes, scopes: list[tuple[str | None, _Tables[EntryT]]]
    ) -> Match[EntryT] | None:
        request = _Request(method.upper(), url, body, self.canon)
        for layer in (self._exact, self._canonical, self._fuzzy):
            for scope, tables in scopes:
                match = layer(request, scope, tables)
                if match is not None:
                    return match
        return None

    def _exact(self, request: _Request, scope: str | None, tables: _Tables[EntryT]) -> Match[EntryT] | None:
        key = (request.method, request.exact, request.digest)
        group = tables.exact.get(key)
        if not group:
            return None
        return Match("exact", self._next(("exact", scope, *key), group))

    def _canonical(
        self, request: _Request, scope: str | None, tables: _Tables[EntryT]
    ) -> Match[EntryT] | None:
        canonical, fired = request.canonical
        group = tables.canonical.get((request.method, canonical))
        body_key = ""
        if group and request.method in BODY_METHODS:
            body_key, body_fired = request.canonical_body
            fired = fired + [name for name in body_fired if name not in fired]
            group = [entry for entry in group if self._body_key(entry) == body_key]
        if not group:
            return None
        rules = fired or tables.canonical_rules.get((request.method, canonical), []) or ["normalised"]
        key = ("canonical", scope, request.method, canonical, body_key)
        return Match("canonical", self._next(key, group), rule="+".join(rules))

    def _fuzzy(self, request: _Request, scope: str | None, tables: _Tables[EntryT]) -> Match[EntryT] | None:
        parts = request.parts
        same_path = tables.by_path.get((request.method, parts.base))
        if not same_path:
            return None
        best: tuple[float, str] | None = None
        for candidate in same_path:
            score = overlap_score(parts.query, split_url(candidate).query)
            if best is None or (-score, candidate) < (-best[0], best[1]):
                best = (score, candidate)
        assert best is not None
        if best[0] < self.canon.rules.fuzzy_min_score:
            return None
        entry = self._next(("fuzzy", scope, request.method, best[1]), same_path[best[1]])
        return Match("fuzzy", entry, score=round(best[0], 4))


class _Request:
    """One request's keys, each computed once however many scopes are searched."""

    def __init__(self, method: str, url: str, body: bytes, canon: Canonicalizer) -> None:
        self.method = method
        self.parts = split_url(url)
        self.exact = self.parts.exact
        self.digest = body_digest(body) if method in BODY_METHODS else ""
        self._url = url
        self._body = body
        self._canon = canon

    @cached_property
    def canonical(self) -> tuple[str, list[str]]:
        return self._canon.url(self._url)

    @cached_property
    def canonical_body(self) -> tuple[str, list[str]]:
        return self._canon.body(self._body)
