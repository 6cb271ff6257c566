"""The study's tables, in the results database beside the episodes they describe.

`study_sessions` holds one row per participant (a refusal is a row with nothing but the
participant's code, `declined` and its time); `responses` one row per question answered after a
task (NULL: an optional question left empty), keyed to the task's episode; the view
`study_responses` joins every answer to `episode_outcomes`.
"""

from __future__ import annotations

import json
import secrets
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import Field

from susbench.core.digests import canonical_json
from susbench.core.models import Frozen
from susbench.results.store import Store

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS study_sessions (
    session_id VARCHAR PRIMARY KEY,
    participant VARCHAR NOT NULL UNIQUE,
    state VARCHAR NOT NULL,
    seed BIGINT,
    design_row INTEGER,
    task_order JSON,
    practice_task VARCHAR,
    run_id VARCHAR,
    practice_run_id VARCHAR,
    settings JSON,
    consented_at TIMESTAMP,
    declined_at TIMESTAMP,
    finished_at TIMESTAMP
)""",
    """CREATE TABLE IF NOT EXISTS responses (
    participant VARCHAR NOT NULL,
    session_id VARCHAR NOT NULL,
    episode_id VARCHAR NOT NULL,
    task_id VARCHAR NOT NULL,
    practice BOOLEAN NOT NULL,
    position INTEGER NOT NULL,
    question_id VARCHAR NOT NULL,
    answer VARCHAR,
    answered_at TIMESTAMP NOT NULL,
    PRIMARY KEY (session_id, task_id, question_id)
)""",
    """CREATE OR REPLACE VIEW study_responses AS
SELECT r.participant, r.session_id, r.position, r.practice, r.question_id, r.answer, r.answered_at,
       o.* EXCLUDE (task_id), r.task_id
FROM responses r JOIN episode_outcomes o USING (episode_id)""",
)

SessionState = Literal["declined", "consented", "finished"]


class StudySettings(Frozen):
    """What a session was started with; resuming needs the same."""

    tasks: str
    practice: str | None
    seed: int
    run_id: str
    practice_run_id: str | None
    questionnaire_sha256: str


class StudySession(Frozen):
    session_id: str
    participant: str
    state: SessionState
    design_row: int | None = None
    task_order: tuple[str, ...] = ()
    settings: StudySettings | None = None
    consented_at: datetime | None = None
    finished_at: datetime | None = None


class TaskResponse(Frozen):
    """The answers given after one task of a session."""

    session: StudySession
    episode_id: str
    task_id: str
    practice: bool
    position: int = Field(ge=0)
    answers: dict[str, str | None]


class StudyStore:
    """The study tables of one results database (opened briefly: a run holds the database between)."""

    def __init__(self, db: Path, read_only: bool = False) -> None:
        self.store = Store(db, read_only=read_only)
        if not read_only:
            for statement in SCHEMA:
                self.store.query(statement)

    def __enter__(self) -> StudyStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.store.close()

    def session(self, participant: str) -> StudySession | None:
        _, rows = self.store.query(
            "SELECT session_id, participant, state, design_row, task_order, settings, consented_at, "
            "finished_at FROM study_sessions WHERE participant = ?",
            [participant],
        )
        if not rows:
            return None
        session_id, participant, state, row, order, settings, consented_at, finished_at = rows[0]
        return StudySession(
            session_id=session_id,
            participant=participant,
            state=state,
            design_row=row,
            task_order=tuple(json.loads(order)) if order else (),
            settings=StudySettings.model_validate_json(settings) if settings else None,
            consented_at=consented_at,
            finished_at=finished_at,
        )

    def decline(self, participant: str, at: datetime) -> None:
        """Store the refusal and nothing else (a refusal after an earlier one keeps the newer time)."""
        self.store.query(
            "INSERT INTO study_sessions (session_id, participant, state, declined_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (participant) DO UPDATE SET declined_at = excluded.declined_at",
            [_session_id(), participant, "declined", at],
        )

    def next_design_row(self) -> int:
        """Participants are counted in the order they consented: the k-th gets design row k."""
        _, rows = self.store.query("SELECT count(*) FROM study_sessions WHERE design_row IS NOT NULL")
        return int(rows[0][0])

    def consent(
        self, participant: str, row: int, order: list[str], settings: StudySettings, at: datetime
    ) -> StudySession:
        values = [
            "consented",
            settings.seed,
            row,
            json.dumps(order),
            settings.practice,
            settings.run_id,
            settings.practice_run_id,
            canonical_json(settings.model_dump(mode="json")),
            at,
        ]
        self.store.query(
            "INSERT INTO study_sessions (session_id, participant, state, seed, design_row, task_order, "
            "practice_task, run_id, practice_run_id, settings, consented_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (participant) DO UPDATE SET "
            "state = excluded.state, seed = excluded.seed, design_row = excluded.design_row, "
            "task_order = excluded.task_order, practice_task = excluded.practice_task, "
            "run_id = excluded.run_id, practice_run_id = excluded.practice_run_id, "
            "settings = excluded.settings, consented_at = excluded.consented_at",
            [_session_id(), participant, *values],
        )
        session = self.session(participant)
        assert session is not None
        return session

    def finish(self, session: StudySession, at: datetime) -> None:
        self.store.query(
            "UPDATE study_sessions SET state = 'finished', finished_at = ? WHERE session_id = ?",
            [at, session.session_id],
        )

    def answered_tasks(self, session: StudySession) -> set[str]:
        _, rows = self.store.query(
            "SELECT DISTINCT task_id FROM responses WHERE session_id = ?", [session.session_id]
        )
        return {row[0] for row in rows}

    def add_response(self, response: TaskResponse, at: datetime) -> None:
        """All of one task's answers in one statement: stored together or not at all."""
        rows = [
            [
                response.session.participant,
                response.session.session_id,
                response.episode_id,
                response.task_id,
                response.practice,
                response.position,
                question,
                answer,
                at,
            ]
            for question, answer in response.answers.items()
        ]
        placeholders = ", ".join("(?, ?, ?, ?, ?, ?, ?, ?, ?)" for _ in rows)
        self.store.query(
            f"INSERT INTO responses VALUES {placeholders}", [value for row in rows for value in row]
        )


def _session_id() -> str:
    return "ss-" + secrets.token_hex(8)
