"""Results in one DuckDB file: runs, episodes, evidence events, outcomes, request logs and agent steps.

Each episode is written in one transaction (episode row, its events, its outcome, its requests,
its steps), so a crash or a kill never leaves half an episode behind, and a resumed run can trust
that an episode row means the whole episode is stored. `episode_outcomes` is the stable view for
analysis and users' own SQL; its columns only ever grow. An operator under test that keeps a trace
(agents) adds one `steps` row per turn; its images live beside the database, in `trace_folder(db)`.
An episode that failed after the extension had decided its pattern keeps the decided outcome, with
the failure beside it in `error`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb

from susbench.core.digests import canonical_json
from susbench.core.errors import SusbenchError
from susbench.core.models import Outcome, OutcomeKind
from susbench.records.episode import EpisodeRecord
from susbench.records.run import RunRecord, StoredRun
from susbench.records.trace import StepRecord
from susbench.results.rules import rules_version

EPISODE_OUTCOME_COLUMNS = (
    "run_id",
    "episode_id",
    "task_id",
    "site",
    "injection_id",
    "pattern_type",
    "operator",
    "mode",
    "repeat",
    "outcome",
    "completed",
    "started_at",
    "duration_s",
    "error",
    "reason",
    "decided_by",
    "rules_version",
    "scored_by",
)

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id VARCHAR PRIMARY KEY,
    config JSON NOT NULL,
    versions JSON NOT NULL,
    git_hash VARCHAR,
    snapshot_id VARCHAR,
    snapshot_sha256 VARCHAR,
    seed BIGINT NOT NULL,
    host VARCHAR NOT NULL,
    started_at TIMESTAMP NOT NULL
);
CREATE TABLE IF NOT EXISTS episodes (
    episode_id VARCHAR PRIMARY KEY,
    run_id VARCHAR NOT NULL,
    task_id VARCHAR NOT NULL,
    site VARCHAR NOT NULL,
    injection_id VARCHAR,
    pattern_type VARCHAR,
    condition VARCHAR NOT NULL,
    operator VARCHAR NOT NULL,
    mode VARCHAR NOT NULL,
    repeat INTEGER NOT NULL,
    seed BIGINT NOT NULL,
    started_at TIMESTAMP NOT NULL,
    ended_at TIMESTAMP NOT NULL,
    duration_s DOUBLE NOT NULL,
    steps INTEGER NOT NULL,
    completed BOOLEAN,
    final_message VARCHAR,
    error VARCHAR,
    archive VARCHAR
);
CREATE TABLE IF NOT EXISTS events (
    episode_id VARCHAR NOT NULL,
    seq INTEGER NOT NULL,
    ts_ms BIGINT NOT NULL,
    source VARCHAR NOT NULL,
    kind VARCHAR NOT NULL,
    detail JSON NOT NULL,
    PRIMARY KEY (episode_id, seq)
);
CREATE TABLE IF NOT EXISTS outcomes (
    episode_id VARCHAR PRIMARY KEY,
    injection_id VARCHAR,
    kind VARCHAR NOT NULL,
    reason VARCHAR NOT NULL,
    checksum VARCHAR NOT NULL
);
CREATE TABLE IF NOT EXISTS requests (
    episode_id VARCHAR NOT NULL,
    seq INTEGER NOT NULL,
    url VARCHAR NOT NULL,
    method VARCHAR NOT NULL,
    match_kind VARCHAR,
    rule VARCHAR,
    score DOUBLE,
    status INTEGER,
    miss BOOLEAN NOT NULL,
    session VARCHAR,
    PRIMARY KEY (episode_id, seq)
);
ALTER TABLE requests ADD COLUMN IF NOT EXISTS session VARCHAR;
ALTER TABLE runs ADD COLUMN IF NOT EXISTS settings JSON;
ALTER TABLE outcomes ADD COLUMN IF NOT EXISTS decided_by VARCHAR;
ALTER TABLE outcomes ADD COLUMN IF NOT EXISTS rules_version VARCHAR;
CREATE TABLE IF NOT EXISTS evidence (
    episode_id VARCHAR PRIMARY KEY,
    payload VARCHAR NOT NULL,
    signature VARCHAR NOT NULL,
    key VARCHAR NOT NULL,
    rules_version VARCHAR NOT NULL
);
CREATE TABLE IF NOT EXISTS rescores (
    rescore_id VARCHAR NOT NULL,
    episode_id VARCHAR NOT NULL,
    kind VARCHAR NOT NULL,
    reason VARCHAR NOT NULL,
    decided_by VARCHAR,
    rules_version VARCHAR NOT NULL,
    rescored_at TIMESTAMP NOT NULL,
    PRIMARY KEY (rescore_id, episode_id)
);
CREATE OR REPLACE VIEW scored_outcomes AS
SELECT episode_id, kind, reason, decided_by, rules_version, scored_by FROM (
    SELECT episode_id, kind, reason, decided_by, rules_version, 'run' AS scored_by,
           TIMESTAMP '1970-01-01' AS scored_at FROM outcomes
    UNION ALL
    SELECT episode_id, kind, reason, decided_by, rules_version, rescore_id, rescored_at FROM rescores
) QUALIFY row_number() OVER (PARTITION BY episode_id ORDER BY scored_at DESC) = 1;
CREATE TABLE IF NOT EXISTS steps (
    episode_id VARCHAR NOT NULL,
    step INTEGER NOT NULL,
    ts_ms BIGINT NOT NULL,
    observation VARCHAR NOT NULL,
    url VARCHAR NOT NULL,
    title VARCHAR NOT NULL,
    tabs INTEGER NOT NULL,
    screenshot VARCHAR,
    screenshot_sha256 VARCHAR,
    observation_text VARCHAR NOT NULL,
    request_bytes BIGINT NOT NULL,
    model VARCHAR NOT NULL,
    reply VARCHAR NOT NULL,
    reply_text VARCHAR NOT NULL,
    actions JSON NOT NULL,
    action_errors JSON NOT NULL,
    model_ms DOUBLE NOT NULL,
    observe_ms DOUBLE NOT NULL,
    act_ms DOUBLE NOT NULL,
    tokens_in BIGINT NOT NULL,
    tokens_out BIGINT NOT NULL,
    cost_usd DOUBLE,
    retries INTEGER NOT NULL,
    error VARCHAR,
    PRIMARY KEY (episode_id, step)
);
CREATE OR REPLACE VIEW episode_outcomes AS
SELECT e.run_id, e.episode_id, e.task_id, e.site, e.injection_id, e.pattern_type, e.operator,
       e.mode, e.repeat, o.kind AS outcome, e.completed, e.started_at, e.duration_s, e.error, o.reason,
       o.decided_by, o.rules_version, o.scored_by
FROM episodes e JOIN scored_outcomes o USING (episode_id);
CREATE OR REPLACE VIEW episode_steps AS
SELECT o.*, s.* EXCLUDE (episode_id) FROM steps s JOIN episode_outcomes o USING (episode_id);
CREATE OR REPLACE VIEW agent_episodes AS
SELECT o.run_id, o.episode_id, o.task_id, o.pattern_type, o.operator, o.outcome, o.completed,
       count(*) AS steps, sum(s.tokens_in) AS tokens_in, sum(s.tokens_out) AS tokens_out,
       sum(s.cost_usd) AS cost_usd, count(*) FILTER (s.cost_usd IS NULL) AS unpriced_steps,
       sum(json_array_length(s.action_errors)) AS action_errors, sum(s.retries) AS retries,
       sum(s.model_ms) / 1000 AS model_s, sum(s.observe_ms + s.act_ms) / 1000 AS harness_s,
       o.duration_s AS wall_s
FROM steps s JOIN episode_outcomes o USING (episode_id)
GROUP BY ALL;
"""

TABLES = ("runs", "episodes", "events", "outcomes", "requests", "steps", "evidence", "rescores")
VIEWS = ("scored_outcomes", "episode_outcomes", "episode_steps", "agent_episodes")
STEP_COLUMNS = tuple(StepRecord.model_fields)


def trace_folder(db: Path) -> Path:
    """Where the run writing `db` keeps its episodes' trace files: `<db folder>/<db name>-traces/`."""
    return db.parent / f"{db.stem}-traces"


def archive_folder(db: Path) -> Path:
    """Where a live run writing `db` archives each episode (a WACZ): `<db folder>/<db name>-archives/`."""
    return db.parent / f"{db.stem}-archives"


def outcome_checksum(outcome: Outcome) -> str:
    """sha256 of the outcome's canonical JSON, stored with it so tampering or drift is visible."""
    return hashlib.sha256(canonical_json(outcome.model_dump(mode="json")).encode()).hexdigest()


class Store:
    """A results database; only one process writes it (the run's parent)."""

    def __init__(self, path: Path, read_only: bool = False) -> None:
        self.path = path
        if read_only and not path.is_file():
            raise SusbenchError(f"{path}: no results database there; expected a DuckDB file written by `run`")
        if not read_only and not path.parent.is_dir():
            raise SusbenchError(f"{path}: its folder {path.parent} does not exist; expected a writable path")
        try:
            self._db = duckdb.connect(str(path), read_only=read_only)
        except duckdb.Error as exc:
            raise _open_error(path, exc) from None
        if not read_only:
            self._db.execute(SCHEMA)
        elif not self._db.execute("SELECT 1 FROM duckdb_tables() WHERE table_name = 'runs'").fetchall():
            self._db.close()
            raise SusbenchError(
                f"{path}: a DuckDB file with no results in it (no `runs` table); expected a file "
                "written by `susbench run`"
            )

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()

    @contextmanager
    def _transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        self._db.begin()
        try:
            yield self._db
        except BaseException:
            self._db.rollback()
            raise
        self._db.commit()

    def add_run(self, run: RunRecord) -> None:
        """Record a run once; a resumed run keeps its first journal entry."""
        self._db.execute(
            "INSERT INTO runs (run_id, config, versions, git_hash, snapshot_id, snapshot_sha256, seed, host, "
            "started_at, settings) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            [
                run.run_id,
                canonical_json(run.config),
                canonical_json(run.versions),
                run.git_hash,
                run.snapshot_id,
                run.snapshot_sha256,
                run.seed,
                run.host,
                run.started_at,
                None if run.settings is None else canonical_json(run.settings.model_dump(mode="json")),
            ],
        )

    def stored_runs(self) -> list[StoredRun]:
        """Every run in the database, oldest first."""
        rows = self._db.execute(
            "SELECT r.run_id, r.config, count(e.episode_id) FROM runs r LEFT JOIN episodes e USING (run_id) "
            "GROUP BY r.run_id, r.config, r.started_at ORDER BY r.started_at, r.run_id"
        ).fetchall()
        return [
            StoredRun(run_id=run_id, config=json.loads(config), episodes=count)
            for run_id, config, count in rows
        ]

    def stored_episode_ids(self, run_id: str) -> set[str]:
        rows = self._db.execute("SELECT episode_id FROM episodes WHERE run_id = ?", [run_id]).fetchall()
        return {row[0] for row in rows}

    def settled_episode_ids(self, run_id: str) -> set[str]:
        """The run's stored episodes a re-run keeps: all but those whose outcome is `error` (a model
        server that was down, a crash), which a re-run tries again."""
        rows = self._db.execute(
            "SELECT episode_id FROM episodes JOIN outcomes USING (episode_id) WHERE run_id = ? AND kind <> ?",
            [run_id, OutcomeKind.ERROR.value],
        ).fetchall()
        return {row[0] for row in rows}

    def write_episode(self, record: EpisodeRecord) -> None:
        """Insert the episode with its events, outcome and requests, all or nothing; a failed write (a
        full disk) leaves what was stored before intact and stops the run with one clear error."""
        try:
            self._forget_episode(record.episode.id)
            self._insert_episode(record)
        except duckdb.Error as exc:
            raise SusbenchError(
                f"{self.path}: could not store episode {record.episode.id}: {duckdb_reason(exc)}; the "
                "episodes stored before are kept, and the same command resumes once this is fixed"
            ) from None

    def _forget_episode(self, episode_id: str) -> None:
        """Drop the episode if it was stored as an `error` (being retried now); in its own transaction,
        so a crash before the new insert leaves the episode to run again, never half stored. Any
        other stored outcome stays, and storing the episode again fails as a duplicate."""
        retried = self._db.execute(
            "SELECT 1 FROM outcomes WHERE episode_id = ? AND kind = ?", [episode_id, OutcomeKind.ERROR.value]
        ).fetchall()
        if not retried:
            return
        with self._transaction() as db:
            for table in ("steps", "requests", "evidence", "rescores", "outcomes", "events", "episodes"):
                db.execute(f"DELETE FROM {table} WHERE episode_id = ?", [episode_id])

    def _insert_episode(self, record: EpisodeRecord) -> None:
        episode = record.episode
        with self._transaction() as db:
            db.execute(
                "INSERT INTO episodes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    episode.id,
                    episode.run_id,
                    episode.task_id,
                    episode.site,
                    episode.injection_id,
                    episode.pattern_type,
                    episode.condition,
                    episode.operator,
                    episode.mode,
                    episode.repeat,
                    episode.seed,
                    record.started_at,
                    record.ended_at,
                    record.duration_s,
                    record.steps,
                    record.completed,
                    record.final_message,
                    record.error,
                    record.archive,
                ],
            )
            if record.events:
                db.executemany(
                    "INSERT INTO events VALUES (?, ?, ?, ?, ?, ?)",
                    [
                        [episode.id, seq, event.ts_ms, event.source, event.kind, canonical_json(event.detail)]
                        for seq, event in enumerate(record.events)
                    ],
                )
            outcome = record.outcome
            evidence = record.evidence
            db.execute(
                "INSERT INTO outcomes (episode_id, injection_id, kind, reason, checksum, decided_by, "
                "rules_version) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    episode.id,
                    outcome.injection_id,
                    outcome.kind.value,
                    outcome.reason,
                    outcome_checksum(outcome),
                    record.decided_by,
                    rules_version() if evidence is None else evidence.rules_version,
                ],
            )
            if evidence is not None:
                db.execute(
                    "INSERT INTO evidence VALUES (?, ?, ?, ?, ?)",
                    [episode.id, evidence.payload, evidence.signature, evidence.key, evidence.rules_version],
                )
            if record.requests:
                db.executemany(
                    "INSERT INTO requests (episode_id, seq, url, method, match_kind, rule, score, status, "
                    "miss, session) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        [
                            episode.id,
                            seq,
                            request.url,
                            request.method,
                            request.match_kind,
                            request.rule,
                            request.score,
                            request.status,
                            request.miss,
                            request.session,
                        ]
                        for seq, request in enumerate(record.requests)
                    ],
                )
            if record.trace:
                db.executemany(
                    f"INSERT INTO steps VALUES (?, {', '.join('?' for _ in STEP_COLUMNS)})",
                    [[episode.id, *_step_row(step)] for step in record.trace],
                )

    def add_rescore(self, rows: Sequence[Sequence[object]]) -> None:
        """One re-score's outcomes (rescore_id, episode_id, kind, reason, decided_by, rules_version,
        rescored_at), all or nothing; the outcomes stored before are kept."""
        if not rows:
            return
        try:
            with self._transaction() as db:
                db.executemany(
                    "INSERT INTO rescores VALUES (?, ?, ?, ?, ?, ?, ?)", [list(row) for row in rows]
                )
        except duckdb.Error as exc:
            raise SusbenchError(
                f"{self.path}: could not store the re-scored outcomes: {duckdb_reason(exc)}"
            ) from None

    def episode_steps(self, episode_id: str) -> list[StepRecord]:
        """An episode's trace, in step order (empty for operators that keep none)."""
        cursor = self._db.execute(
            f"SELECT step, {', '.join(STEP_COLUMNS[1:])} FROM steps WHERE episode_id = ? ORDER BY step",
            [episode_id],
        )
        rows = cursor.fetchall()
        return [_step_from_row(row) for row in rows]

    def query(self, sql: str, params: Sequence[object] = ()) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Run SQL and return column names and rows; SQL errors become a SusbenchError."""
        try:
            cursor = self._db.execute(sql, list(params))
            columns = [column[0] for column in cursor.description or ()]
            rows = cursor.fetchall() if columns else []
        except duckdb.Error as exc:
            raise SusbenchError(f"query failed: {exc}") from None
        return columns, rows

    def export_parquet(self, folder: Path) -> list[Path]:
        """Every table and view as one Parquet file each (the controller's first, then any other part's)."""
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SusbenchError(f"{folder}: cannot create the export folder: {exc}") from None
        _, found = self.query(
            "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' AND NOT internal UNION "
            "SELECT view_name FROM duckdb_views() WHERE schema_name = 'main' AND NOT internal"
        )
        others = sorted({row[0] for row in found} - {*TABLES, *VIEWS})  # e.g. a study's responses
        written = []
        for name in (*TABLES, *VIEWS, *others):
            target = folder / f"{name}.parquet"
            quoted = str(target).replace("'", "''")
            self._db.execute(f"COPY (SELECT * FROM {name}) TO '{quoted}' (FORMAT parquet)")
            written.append(target)
        return written


LOCK_HOLDER = re.compile(r"Conflicting lock is held in (?P<program>.+?) \(PID (?P<pid>\d+)\)")


def duckdb_reason(exc: duckdb.Error) -> str:
    """DuckDB's message without its error class prefix and its documentation link."""
    text = str(exc).split(" See also ")[0].strip()
    return re.sub(r"^[A-Za-z ]+ Error: ", "", text)


def _open_error(path: Path, exc: duckdb.Error) -> SusbenchError:
    """A second run (or a query) on a database that a run is writing is refused, naming the holder."""
    holder = LOCK_HOLDER.search(str(exc))
    if holder is None:
        return SusbenchError(f"{path}: cannot open as a DuckDB database: {duckdb_reason(exc)}")
    pid = int(holder["pid"])
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        command = holder["program"]
    return SusbenchError(
        f"{path}: another process (PID {pid}: {command.strip()}) has this results database open; wait for "
        "it to finish or stop it (re-running the same command resumes), or use another --db"
    )


def _step_row(step: StepRecord) -> list[object]:
    values = step.model_dump(mode="json")
    return [
        canonical_json(values[name]) if name in ("actions", "action_errors") else values[name]
        for name in STEP_COLUMNS
    ]


def _step_from_row(row: tuple[Any, ...]) -> StepRecord:
    values = dict(zip(STEP_COLUMNS, row, strict=True))
    values["actions"] = json.loads(values["actions"])
    values["action_errors"] = json.loads(values["action_errors"])
    return StepRecord.model_validate(values)
