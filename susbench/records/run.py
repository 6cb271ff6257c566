"""A run's record: its configuration and identity, how its episodes ran, and what the store holds of it."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import Field

from susbench.core.models import Frozen, ReplayMode


class RunSettings(Frozen):
    """How the run's first invocation ran its episodes, beyond its identity: what `reproduce` repeats."""

    replay_mode: ReplayMode = "direct"
    step_timeout_s: float = Field(default=15.0, gt=0)
    episode_timeout_s: float | None = Field(default=None, gt=0, description="default: the task's max_seconds")
    headless: bool = True


class RunRecord(Frozen):
    """One run: its configuration and everything needed to reproduce it (AgentLab's journal)."""

    run_id: str
    config: dict[str, Any]
    settings: RunSettings | None = Field(default=None, description="None in runs stored before settings")
    versions: dict[str, str] = Field(default_factory=dict)
    git_hash: str | None = None
    snapshot_id: str | None = None
    snapshot_sha256: str | None = None
    seed: int
    host: str
    started_at: datetime


class StoredRun(Frozen):
    """A run already in the database: its configuration and how many episodes it stored."""

    run_id: str
    config: dict[str, Any]
    episodes: int = Field(ge=0)
