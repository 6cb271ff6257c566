"""The whole evidence of one end-to-end episode, printed when its test fails: every event with its time
and whole detail, every action taken and what the extension listed each time it was asked. Printed,
not put in the assertion message: pytest cuts the repr of a message that is not a string, and the
conftest's section (tests/support/evidence.py) cuts details and reads only a DuckDB its run has let go.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from playwright.sync_api import Page

from susbench.browser.bridge import Choice
from susbench.core.models import ChoiceRole

Lister = Callable[..., list[Choice]]


def now_ms() -> int:
    """Wall-clock ms, the clock the extension stamps its events with (`Date.now()`)."""
    return round(time.time() * 1000)


def as_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def choices_text(choices: Sequence[Choice]) -> str:
    """The choices as the extension described them: role, label, rect and whether a click counts now."""
    if not choices:
        return "no choices"
    return "; ".join(
        f"{choice.role} {choice.label!r} at ({choice.x:.0f}, {choice.y:.0f}) "
        f"{choice.width:.0f}x{choice.height:.0f} {'visible' if choice.visible else 'not visible'}"
        for choice in choices
    )


def event_lines(events: Iterable[tuple[int, str, Any]], start_ms: int) -> list[str]:
    """Each event as its time since `start_ms`, its kind and its whole detail."""
    return [f"  {ts_ms - start_ms:+7d} ms  {kind} {as_json(detail)}" for ts_ms, kind, detail in events]


@dataclass
class ChoiceListLook:
    """One answer of the extension's choice list, and how many times in a row it was the same."""

    ts_ms: int
    url: str
    scroll_to: ChoiceRole | None
    choices: tuple[Choice, ...]
    times: int = 1

    @property
    def answer(self) -> tuple[str, ChoiceRole | None, tuple[Choice, ...]]:
        return self.url, self.scroll_to, self.choices


class ChoiceLog:
    """Stands in for `ExtensionBridge.choices`, passing each answer on unchanged and noting it: what the
    operator was shown each time it looked (the scripted baselines record only what they clicked)."""

    def __init__(self, choices: Lister) -> None:
        self._choices = choices
        self.looks: list[ChoiceListLook] = []

    def __call__(self, page: Page, scroll_to: ChoiceRole | None = None, wait: float = 0.0) -> list[Choice]:
        found = self._choices(page, scroll_to=scroll_to, wait=wait)
        look = ChoiceListLook(now_ms(), page.url, scroll_to, tuple(found))
        if self.looks and self.looks[-1].answer == look.answer:
            self.looks[-1].times += 1
        else:
            self.looks.append(look)
        return found

    def lines(self, start_ms: int) -> list[str]:
        return [
            f"  {look.ts_ms - start_ms:+7d} ms  x{look.times} scroll_to={look.scroll_to} {look.url}: "
            f"{choices_text(look.choices)}"
            for look in self.looks
        ]


def story(headline: str, sections: dict[str, list[str]]) -> str:
    """The headline, then each section under its title with its number of lines."""
    lines = [headline]
    for title, body in sections.items():
        lines += [f"-- {title} ({len(body)})", *body]
    return "\n".join(lines)


@contextmanager
def told_on_failure(tell: Callable[[], str]) -> Iterator[None]:
    """Print `tell()` if the block fails: pytest shows a failed test's captured stdout whole."""
    try:
        yield
    except (Exception, pytest.fail.Exception):
        try:
            told = tell()
        except Exception as exc:  # noqa: BLE001 - gathering evidence must not hide the failure
            told = f"the episode's evidence could not be gathered: {type(exc).__name__}: {exc}"
        print(f"\n==== the episode's evidence\n{told}")
        raise
