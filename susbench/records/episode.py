"""An episode's record: everything stored for one finished episode, and the requests it made."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from susbench.core.models import Episode, Event, Frozen, Outcome
from susbench.records.trace import StepRecord


class RequestRecord(Frozen):
    """One request of an episode as the replayer or recorder saw it."""

    url: str
    method: str = "GET"
    match_kind: str | None = None
    rule: str | None = None
    score: float | None = None
    status: int | None = None
    miss: bool = False
    session: str | None = Field(default=None, description="the recorded browser session that answered it")


class EpisodeRecord(Frozen):
    """Everything stored for one finished episode, written in one transaction."""

    episode: Episode
    started_at: datetime
    ended_at: datetime
    steps: int = Field(default=0, ge=0)
    completed: bool | None = None
    final_message: str = ""
    error: str | None = Field(
        default=None, description="why the episode failed (beside its outcome if the pattern was decided)"
    )
    archive: str | None = Field(default=None, description="WACZ of a live episode's traffic")
    outcome: Outcome
    events: tuple[Event, ...] = ()
    requests: tuple[RequestRecord, ...] = ()
    trace: tuple[StepRecord, ...] = Field(default=(), description="an operator under test's steps")

    @property
    def duration_s(self) -> float:
        return max(0.0, (self.ended_at - self.started_at).total_seconds())
