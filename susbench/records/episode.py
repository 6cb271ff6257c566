"""An episode's record: everything stored for one finished episode, and the requests it made."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

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


DecidedBy = Literal["chose", "moved_on", "left", "ran_out"]
"""How a decided exposure was decided: the subject acted on the pattern's own choices, went on along the
task's flow past it, left the flow (a page outside it, another site, a page not in the snapshot), or the
step or time budget ended."""


class Evidence(Frozen):
    """What an outcome was computed from: the extension's signed report (canonical JSON, with every
    event) and its HMAC-SHA256, the episode's key (its secret only while the episode ran: stored so the
    report can be checked offline, it shows edits of the stored evidence, not a forger with write access
    to the database), and the version of the scoring rules that scored it."""

    payload: str
    signature: str
    key: str
    rules_version: str


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
    evidence: Evidence | None = Field(default=None, description="None when the extension gave no report")
    decided_by: DecidedBy | None = Field(default=None, description="None unless avoided or not_avoided")

    @property
    def duration_s(self) -> float:
        return max(0.0, (self.ended_at - self.started_at).total_seconds())
