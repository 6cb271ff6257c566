"""The leak-test harness: what must never reach a model, and a search of every byte sent to one.

Requests are decoded (JSON, escapes and all) and every string in them is searched, except image
payloads (base64 PNGs, which are pixels, not words) and the credential headers (the key is meant
for the server). What is searched for is the answer: pattern-type names in any spelling, the
choices' role names used as identifiers, our internal attribute names, injection ids, the
reference paths' selectors, the project's name, and the phrase "dark pattern".
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from susbench.agents.servers import Captured
from susbench.core.models import CHOICE_ROLES, PATTERN_TYPES, Injection, Task

CREDENTIAL_HEADERS = frozenset({"authorization", "x-api-key"})
SEPARATOR = r"[\s_\-]*"
# Role names that are ordinary page words too ("Close", "Safe checkout"): searched as identifiers only.
ORDINARY_ROLE_WORDS = frozenset({"safe", "close", "reveal"})
INTERNAL_ATTRIBUTES = ("data-role", "data-part", "data-dismiss", "data-emphasis", "data-state")


@dataclass(frozen=True)
class Secret:
    label: str
    pattern: re.Pattern[str]


def _words(pattern_type: str) -> list[str]:
    return ["pop", "up", "ad"] if pattern_type == "popup_ad" else pattern_type.split("_")


def answer_secrets(injections: Mapping[str, Injection], tasks: Iterable[Task]) -> list[Secret]:
    """Everything that would tell a model where the dark pattern is or what it is."""
    found = [
        # snake_case, space, kebab-case, camelCase, TitleCase, run together: any case, any separator
        Secret(f"pattern type {name}", re.compile(SEPARATOR.join(_words(name)) + "(?![a-z])", re.IGNORECASE))
        for name in PATTERN_TYPES
    ]
    for role in CHOICE_ROLES:
        if role in ORDINARY_ROLE_WORDS:
            found.append(
                Secret(f"role {role} as an identifier", re.compile(rf"role[\"'\s:=]+{role}\b", re.I))
            )
        else:
            found.append(Secret(f"role {role}", re.compile(rf"\b{role}\b", re.IGNORECASE)))
    found += [
        Secret(f"attribute {name}", re.compile(re.escape(name), re.IGNORECASE))
        for name in INTERNAL_ATTRIBUTES
    ]
    found += [Secret(f"injection id {key}", re.compile(re.escape(key), re.IGNORECASE)) for key in injections]
    selectors = {step.selector for task in tasks for step in task.reference_path if step.selector}
    found += [
        Secret(f"selector {selector}", re.compile(re.escape(selector))) for selector in sorted(selectors)
    ]
    found.append(Secret("the project's name", re.compile("susbench", re.IGNORECASE)))
    found.append(Secret("the phrase dark pattern", re.compile(r"dark[\s_\-]*pattern", re.IGNORECASE)))
    return found


def _is_image(key: str | None, value: str) -> bool:
    return value.startswith("data:image/") or (key == "data" and len(value) > 1000 and " " not in value)


def readable_strings(value: Any, key: str | None = None) -> Iterator[str]:
    """Every string in decoded JSON (keys too), images left out."""
    if isinstance(value, str):
        if not _is_image(key, value):
            yield value
    elif isinstance(value, dict):
        for name, item in value.items():
            yield name
            yield from readable_strings(item, name)
    elif isinstance(value, list):
        for item in value:
            yield from readable_strings(item, key)


def request_texts(request: Captured) -> Iterator[str]:
    """What one request said: its path, its headers (not the credentials) and its decoded body."""
    yield request.path
    for name, value in request.headers.items():
        if name not in CREDENTIAL_HEADERS:
            yield f"{name}: {value}"
    yield from readable_strings(json.loads(request.body))


def find_leaks(requests: Iterable[Captured], secrets: list[Secret]) -> list[str]:
    """Each secret found, with the text around it."""
    leaks = []
    for request in requests:
        for text in request_texts(request):
            for secret in secrets:
                match = secret.pattern.search(text)
                if match:
                    around = text[max(0, match.start() - 40) : match.end() + 40]
                    leaks.append(f"{secret.label} in {request.path}: ...{around}...")
    return leaks
