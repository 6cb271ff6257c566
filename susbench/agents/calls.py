"""Model calls that survive a flaky server: 429, 5xx and timeouts are retried with exponential
backoff (honouring Retry-After) within a per-call and a per-episode budget; anything else, or a
server that stays down, ends the episode as `error` with the reason."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from susbench.agents.settings import AgentConfig
from susbench.core.errors import SusbenchError

T = TypeVar("T")
RETRYABLE_STATUS = frozenset({408, 409, 429}) | frozenset(range(500, 600))


class ModelUnavailable(SusbenchError):
    """The model server failed and retrying did not help (or was not allowed)."""


@dataclass(frozen=True)
class Answer(Generic[T]):
    """A model call that succeeded: the SDK's parsed reply, the raw body both ways, and its cost in time."""

    parsed: T
    raw_reply: str
    request_bytes: int
    latency_ms: float
    retries: int


def _status(exc: Exception) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def _retry_after(exc: Exception) -> float | None:
    response = getattr(exc, "response", None)
    header = None if response is None else response.headers.get("retry-after")
    try:
        return None if header is None else max(0.0, float(header))
    except ValueError:
        return None


def describe(exc: Exception) -> str:
    status = _status(exc)
    first = (str(exc).splitlines() or [""])[0][:200]
    return f"HTTP {status}: {first}" if status is not None else f"{type(exc).__name__}: {first}"


class ModelCaller:
    """Calls one model server for one episode, retrying within the config's budgets."""

    def __init__(
        self, config: AgentConfig, server: str, connection_errors: tuple[type[Exception], ...]
    ) -> None:
        self.config = config
        self.server = server
        self.connection_errors = connection_errors
        self.budget = config.retry_budget

    def retryable(self, exc: Exception) -> bool:
        status = _status(exc)
        if status is not None:
            return status in RETRYABLE_STATUS
        return isinstance(exc, self.connection_errors)

    def call(self, send: Callable[[float], Any], timeout_s: float) -> Answer[Any]:
        """`send(timeout)` returns the SDK's raw-response wrapper; retried as the config allows."""
        started = time.perf_counter()
        retries = 0
        while True:
            try:
                raw = send(min(self.config.timeout_s, timeout_s))
                return Answer(
                    parsed=raw.parse(),
                    raw_reply=raw.text,
                    request_bytes=len(raw.http_request.content or b""),
                    latency_ms=1000 * (time.perf_counter() - started),
                    retries=retries,
                )
            except Exception as exc:  # noqa: BLE001 - sorted into retryable and fatal below
                if not self.retryable(exc):
                    raise ModelUnavailable(f"model server {self.server}: {describe(exc)}") from None
                if retries >= self.config.max_retries or self.budget <= 0:
                    spent = (
                        "the episode's retry budget is spent" if self.budget <= 0 else f"{retries} retries"
                    )
                    raise ModelUnavailable(
                        f"model server {self.server}: {describe(exc)} after {spent}"
                    ) from None
                wait = min(self.config.backoff_max_s, self.config.backoff_s * 2**retries)
                time.sleep(min(self.config.backoff_max_s, max(wait, _retry_after(exc) or 0.0)))
                retries += 1
                self.budget -= 1
