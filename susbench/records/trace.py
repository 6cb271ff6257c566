"""The trace format of an operator under test: one `StepRecord` per turn of its loop.

A step is what the operator saw (observation kind, page facts, the image it was shown and the text
it read), what its model answered (raw reply and words), what it did (parsed actions and the ones
refused), and what it cost (model latency, tokens, an estimated price, harness time). Images are
files in the episode's trace folder, referenced by name and sha256; everything else goes to the
`steps` table of the results database. Agent operators, Browser Use and a person's study session
all write this one format.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from susbench.core.models import Frozen


class StepRecord(Frozen):
    """One turn: observe, ask the model, act."""

    index: int = Field(ge=0, description="0-based turn number within the episode")
    ts_ms: int = Field(description="epoch ms when the observation was taken")
    observation: str = Field(description="observation kind: screenshot, som, axtree, or the operator's own")
    url: str = ""
    title: str = ""
    tabs: int = Field(default=1, ge=0)
    screenshot: str | None = Field(default=None, description="image file in the episode's trace folder")
    screenshot_sha256: str | None = None
    observation_text: str = Field(default="", description="the text observation sent to the model")
    request_bytes: int = Field(default=0, ge=0, description="bytes of the request body sent to the model")
    model: str = ""
    reply: str = Field(default="", description="the model server's raw reply (response body)")
    reply_text: str = Field(default="", description="the model's own words in that reply")
    actions: tuple[dict[str, Any], ...] = Field(default=(), description="parsed actions, as executed")
    action_errors: tuple[str, ...] = Field(default=(), description="refused or failed actions, as fed back")
    model_ms: float = Field(default=0.0, ge=0, description="model latency, retries included")
    observe_ms: float = Field(default=0.0, ge=0)
    act_ms: float = Field(default=0.0, ge=0)
    tokens_in: int = Field(default=0, ge=0)
    tokens_out: int = Field(default=0, ge=0)
    cost_usd: float | None = Field(
        default=None, description="estimated from the price table; None if unpriced"
    )
    retries: int = Field(default=0, ge=0, description="model calls retried after 429/5xx/timeouts")
    error: str | None = None
