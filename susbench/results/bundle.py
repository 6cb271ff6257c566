"""Result bundles: the Parquet export of a results database plus `run.json`, a manifest that says how
every run in it can be re-run (its whole identity as stored: what was asked, seeds, operator settings,
browser and image, input digests; the snapshot, tool versions, git hash) and the sha256 of every file
beside it.

The manifest is built only from what the database stores, never from the environment, so an API
key that an agent read from the environment cannot reach it; a stored value that equals a secret
environment variable, or a setting named like a secret, stops the export instead of being written.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, ValidationError

from susbench import __version__
from susbench.core.digests import file_sha256
from susbench.core.errors import InputError, SusbenchError
from susbench.core.identity import RunIdentity
from susbench.core.loading import describe_validation_error, read_data_file, validate_data
from susbench.core.models import Condition, Frozen, OutcomeKind, PatternType
from susbench.records.run import RunSettings

# DuckDB is imported when a bundle is read or written: `susbench schema --help` reads ResultManifest.
if TYPE_CHECKING:
    from susbench.results.store import Store

MANIFEST_NAME = "run.json"
BUNDLE_FORMAT = "susbench-results/2"
"""/2 carries each run's identity whole (/1 left out the browser, the image and the study)."""
SECRET_VARIABLE = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.IGNORECASE)
SECRET_FIELD = re.compile(
    r"(api[_-]?key|token|secret|password|passwd|credentials?|authorization|private[_-]?key)$", re.IGNORECASE
)
SHORTEST_SECRET = 8


class BundleFile(Frozen):
    """One exported table or view."""

    name: str = Field(description="file name inside the bundle, e.g. episodes.parquet")
    rows: int = Field(ge=0)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


class SnapshotReference(Frozen):
    """The snapshot a run replayed."""

    id: str | None
    sha256: str
    path: str | None = Field(default=None, description="where it was when the run started")


class BundleRun(Frozen):
    """One run of the bundle: its identity as stored, how it ran, and what it stored."""

    run_id: str
    identity: RunIdentity | None = Field(
        description="the run's identity, every field as stored; None for a run stored before run "
        "identities held input digests (its stored config is then all in other_config)"
    )
    snapshot: SnapshotReference | None
    settings: RunSettings | None = Field(description="replay mode and time limits; None in older runs")
    other_config: dict[str, Any] = Field(
        default_factory=dict, description="stored configuration fields outside the identity (e.g. image_id)"
    )
    tasks: tuple[str, ...] = Field(description="the task ids of its stored episodes")
    repeats: int = Field(ge=0, description="the highest repeat stored, plus one")
    episodes: int = Field(ge=0)
    outcomes: dict[str, int]
    versions: dict[str, str]
    git_hash: str | None
    host: str
    started_at: datetime


class ResultManifest(Frozen):
    """`run.json`: what a result bundle holds and how to re-run each of its runs."""

    format: Literal["susbench-results/2"] = BUNDLE_FORMAT
    exported_at: datetime
    exported_by: str = Field(description="the susbench version that wrote the bundle")
    database: str = Field(description="the results database's file name")
    files: tuple[BundleFile, ...]
    runs: tuple[BundleRun, ...]

    def run(self, name: str) -> BundleRun:
        """A run by id or unique prefix."""
        found = [run for run in self.runs if run.run_id.startswith(name)]
        if len(found) != 1:
            known = ", ".join(run.run_id for run in self.runs) or "none"
            problem = "matches no run" if not found else "matches several runs"
            raise SusbenchError(f"--run {name!r} {problem} of the bundle; expected one of: {known}")
        return found[0]


class Verdict(Frozen):
    """How an episode was scored: what a deterministic operator's re-run must reproduce, field for field."""

    outcome: OutcomeKind
    reason: str
    completed: bool | None
    error: str | None
    steps: int
    final_message: str


def verdict_of(row: Sequence[Any]) -> Verdict:
    """A verdict from a query row whose columns are its fields, in order."""
    return Verdict.model_validate(dict(zip(Verdict.model_fields, row, strict=True)))


class BundleEpisode(Frozen):
    """One stored episode as planned (task, repeat, injection, operator seed) and as scored."""

    episode_id: str
    run_id: str
    task_id: str
    repeat: int
    injection_id: str | None
    pattern_type: PatternType | None
    condition: Condition
    seed: int
    verdict: Verdict


EPISODES_SQL = """
SELECT e.episode_id, e.run_id, e.task_id, e.repeat, e.injection_id, e.pattern_type, e.condition, e.seed,
       o.kind, o.reason, e.completed, e.error, e.steps, e.final_message
FROM read_parquet(?) e JOIN read_parquet(?) o USING (episode_id)
WHERE e.run_id = ? ORDER BY e.task_id, e.repeat
"""


def _leaves(value: object, path: str = "") -> Iterator[tuple[str, object]]:
    """Every (dotted field path, scalar) below a JSON value."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield from _leaves(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _leaves(item, f"{path}.{index}")
    else:
        yield path, value


def secret_problems(document: Mapping[str, Any], environ: Mapping[str, str]) -> list[str]:
    """Fields that hold a secret: a secret environment variable's value, or a value under a secret's name."""
    secrets = {
        value: name
        for name, value in environ.items()
        if SECRET_VARIABLE.search(name) and len(value) >= SHORTEST_SECRET
    }
    problems = []
    for path, value in _leaves(document):
        if not isinstance(value, str) or not value:
            continue
        variable = next((name for secret, name in secrets.items() if secret in value), None)
        if variable is not None:
            problems.append(f"field '{path}' holds the value of ${variable}")
        elif SECRET_FIELD.search(path.rsplit(".", 1)[-1]):
            problems.append(f"field '{path}' is named like a secret")
    return problems


def _stored_episodes(store: Store) -> dict[str, dict[str, Any]]:
    """Per run: the task ids, repeats, episode count and outcome counts of its stored episodes."""
    _, rows = store.query(
        "SELECT run_id, list(DISTINCT task_id ORDER BY task_id), max(repeat) + 1, count(*) "
        "FROM episode_outcomes GROUP BY run_id"
    )
    stored: dict[str, dict[str, Any]] = {
        run_id: {"tasks": tasks, "repeats": repeats, "episodes": count, "outcomes": {}}
        for run_id, tasks, repeats, count in rows
    }
    _, counts = store.query(
        "SELECT run_id, outcome, count(*) FROM episode_outcomes GROUP BY ALL ORDER BY ALL"
    )
    for run_id, outcome, count in counts:
        stored[run_id]["outcomes"][outcome] = count
    return stored


def _stored_identity(source: str, config: dict[str, Any]) -> RunIdentity | None:
    """The run's identity from its stored config; None when the run was stored before identities
    held input digests (a required field is missing), an error naming the field when one is bad."""
    if any(info.is_required() and name not in config for name, info in RunIdentity.model_fields.items()):
        return None
    try:
        return RunIdentity.from_config(config)
    except ValidationError as exc:
        raise InputError(describe_validation_error(f"{source}: config", exc)) from None


def _bundle_runs(store: Store) -> list[BundleRun]:
    _, columns = store.query("SELECT column_name FROM information_schema.columns WHERE table_name = 'runs'")
    settings_column = "settings" if ("settings",) in columns else "NULL"
    _, rows = store.query(
        "SELECT run_id, config, versions, git_hash, snapshot_id, snapshot_sha256, host, started_at, "
        f"{settings_column} FROM runs ORDER BY started_at, run_id"
    )
    stored = _stored_episodes(store)
    runs = []
    for (
        run_id,
        config_text,
        versions_text,
        git_hash,
        snapshot_id,
        sha256,
        host,
        started,
        settings,
    ) in rows:
        config, versions = json.loads(config_text), json.loads(versions_text)
        problems = secret_problems({"config": config, "versions": versions}, os.environ)
        if problems:
            raise SusbenchError(
                f"{store.path}: run {run_id}: {'; '.join(problems)}; refusing to export it. Expected "
                "settings without secrets (API keys stay in the environment)"
            )
        source = f"{store.path}: run {run_id}"
        identity = _stored_identity(source, config)
        kept = set() if identity is None else set(RunIdentity.model_fields)
        data = {
            "run_id": run_id,
            "identity": identity,
            "snapshot": None
            if sha256 is None
            else {"id": snapshot_id, "sha256": sha256, "path": config.get("snapshot")},
            "settings": None if settings is None else json.loads(settings),
            "other_config": {
                key: value for key, value in config.items() if key not in kept and key != "snapshot"
            },
            **stored.get(run_id, {"tasks": (), "repeats": 0, "episodes": 0, "outcomes": {}}),
            "versions": versions,
            "git_hash": git_hash,
            "host": host,
            "started_at": started,
        }
        runs.append(validate_data(source, data, BundleRun))
    return runs


def export_bundle(store: Store, folder: Path) -> list[Path]:
    """Every table and view as Parquet, then `run.json` naming them with their sha256."""
    runs = _bundle_runs(store)
    written = store.export_parquet(folder)
    files = []
    for path in written:
        _, ((rows,),) = store.query("SELECT count(*) FROM read_parquet(?)", [str(path)])
        files.append(BundleFile(name=path.name, rows=rows, sha256=file_sha256(path)))
    manifest = ResultManifest(
        exported_at=datetime.now(UTC),
        exported_by=__version__,
        database=store.path.name,
        files=tuple(files),
        runs=tuple(runs),
    )
    target = folder / MANIFEST_NAME
    target.write_text(manifest.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return [*written, target]


def read_bundle(folder: Path) -> ResultManifest:
    """The bundle's manifest, checked against the files beside it."""
    path = folder / MANIFEST_NAME
    if not path.is_file():
        raise SusbenchError(
            f"{folder}: no {MANIFEST_NAME} there; expected a folder written by `results export`"
        )
    data = read_data_file(path)
    written = data.get("format") if isinstance(data, dict) else None
    if written != BUNDLE_FORMAT:
        raise SusbenchError(
            f"{path}: field 'format' is {written!r}; expected {BUNDLE_FORMAT!r}. A bundle of an older "
            "format holds incomplete run identities: export it again from its database with "
            "`susbench results export`"
        )
    manifest = validate_data(str(path), data, ResultManifest)
    for index, item in enumerate(manifest.files):
        member = folder / item.name
        if not member.is_file():
            raise SusbenchError(f"{path}: field 'files.{index}': {member} is missing from the bundle")
        if file_sha256(member) != item.sha256:
            raise SusbenchError(
                f"{member}: its sha256 differs from the one in {path}; the bundle changed after export"
            )
    return manifest


def bundle_episodes(folder: Path, run_id: str) -> list[BundleEpisode]:
    """A run's stored episodes, read from the bundle's Parquet files, by task and repeat."""
    import duckdb

    parquet = [str(folder / "episodes.parquet"), str(folder / "outcomes.parquet")]
    with duckdb.connect() as db:
        rows = db.execute(EPISODES_SQL, [*parquet, run_id]).fetchall()
    planned = [name for name in BundleEpisode.model_fields if name != "verdict"]
    return [
        BundleEpisode.model_validate(
            {
                **dict(zip(planned, row[: len(planned)], strict=True)),
                "verdict": verdict_of(row[len(planned) :]),
            }
        )
        for row in rows
    ]
