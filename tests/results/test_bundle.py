"""Result bundles: `results export` writes Parquet plus a run.json that validates, names every file by
its sha256, carries each run's identity, seeds and settings, and never a secret from the environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pytest

from susbench.agents.demonstration import DemonstrationSet
from susbench.controller import RunOptions, run_identity
from susbench.controller.journal import run_record
from susbench.controller.options import BrowserFacts
from susbench.core.errors import SusbenchError
from susbench.core.identity import RunIdentity, RunInputs, StudyRun
from susbench.core.models import Episode, Outcome, OutcomeKind
from susbench.operators import OperatorSettings
from susbench.records.episode import EpisodeRecord
from susbench.records.run import RunRecord, RunSettings
from susbench.results.bundle import MANIFEST_NAME, ResultManifest, bundle_episodes, export_bundle, read_bundle
from susbench.results.store import Store
from tests.support.agents import KEY_VARIABLE, run_agent
from tests.support.type_tasks import TYPE_TASKS

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
SECRET = "sk-test-4f1c2e9a7b3d5e6f"  # what an agent's API key looks like in the environment
DIGESTS = {
    "snapshot_sha256": "a" * 64,
    "task_catalog_sha256": "b" * 64,
    "injection_catalog_sha256": "c" * 64,
    "extension_sha256": "d" * 64,
    "susbench_version": "0.1.0",
}
AGENT_SETTINGS = {
    "model": "gpt-test",
    "base_url": "http://127.0.0.1:9/v1",
    "observation": "som",
    "config": {"api_key_env": "OPENAI_API_KEY", "max_tokens": 512},
}


def identity(operator: str, **extra: Any) -> dict[str, Any]:
    return {
        "operator": operator,
        "mode": "snapshot",
        "live_resolve": [],
        "live_date": None,
        "seed": 3,
        "control_rate": 0.25,
        **DIGESTS,
        "snapshot": "/data/shop.wacz",
        **extra,
    }


def episode_record(run_id: str, operator: str, task: str, repeat: int, kind: OutcomeKind) -> EpisodeRecord:
    episode = Episode(
        id=f"ep-{run_id}-{task}-{repeat}",
        run_id=run_id,
        task_id=task,
        site="pizzapalace.test",
        injection_id="pp-preselect",
        pattern_type="preselection",
        condition="injected",
        operator=operator,
        mode="snapshot",
        repeat=repeat,
        seed=1000 + repeat,
    )
    return EpisodeRecord(
        episode=episode,
        started_at=T0,
        ended_at=T0 + timedelta(seconds=3),
        steps=5,
        completed=True,
        final_message="reference path finished",
        outcome=Outcome(episode_id=episode.id, injection_id="pp-preselect", kind=kind, reason="declined"),
    )


def fill(db: Path, agent_config: dict[str, Any] | None = None) -> None:
    """A baseline run of two tasks, two repeats, and an agent run with settings as agents store them."""
    with Store(db) as store:
        store.add_run(
            RunRecord(
                run_id="run-careful",
                config=identity("careful"),
                settings=RunSettings(replay_mode="proxy", step_timeout_s=9.0),
                versions={"susbench": "0.1.0", "duckdb": "1.1"},
                git_hash="0123abc",
                snapshot_id="shop-2026",
                snapshot_sha256=DIGESTS["snapshot_sha256"],
                seed=3,
                host="h",
                started_at=T0,
            )
        )
        store.add_run(
            RunRecord(
                run_id="run-agent",
                config=identity("openai-chat", operator_settings=agent_config or AGENT_SETTINGS),
                seed=3,
                host="h",
                started_at=T0 + timedelta(minutes=1),
            )
        )
        for task in ("pizza-a", "pizza-b"):
            for repeat in (0, 1):
                store.write_episode(
                    episode_record("run-careful", "careful", task, repeat, OutcomeKind.AVOIDED)
                )
        store.write_episode(episode_record("run-agent", "openai-chat", "pizza-a", 0, OutcomeKind.NOT_AVOIDED))


def susbench(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "susbench", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )


def test_export_writes_a_manifest_of_every_run(tmp_path: Path) -> None:
    db, out = tmp_path / "r.duckdb", tmp_path / "bundle"
    fill(db)
    with Store(db, read_only=True) as store:
        written = export_bundle(store, out)
    assert written[-1] == out / MANIFEST_NAME
    manifest = read_bundle(out)
    assert [item.name for item in manifest.files] == [path.name for path in written[:-1]]
    assert {item.name: item.rows for item in manifest.files}["episodes.parquet"] == 5
    careful, agent = manifest.runs
    assert careful.identity is not None and agent.identity is not None
    assert careful.run_id == "run-careful"
    assert careful.identity == RunIdentity.from_config(identity("careful"))
    assert careful.identity.model_dump(mode="json", include=set(DIGESTS)) == DIGESTS
    assert careful.other_config == {}  # the snapshot's path is in `snapshot`
    assert careful.snapshot is not None and careful.snapshot.id == "shop-2026"
    assert careful.snapshot.path == "/data/shop.wacz"
    assert careful.settings == RunSettings(replay_mode="proxy", step_timeout_s=9.0)
    assert (careful.tasks, careful.repeats, careful.episodes) == (("pizza-a", "pizza-b"), 2, 4)
    assert careful.outcomes == {"avoided": 4} and careful.git_hash == "0123abc"
    assert careful.versions == {"susbench": "0.1.0", "duckdb": "1.1"}
    assert agent.identity.operator_settings == AGENT_SETTINGS and agent.settings is None
    episodes = bundle_episodes(out, "run-careful")
    assert [(e.task_id, e.repeat, e.seed, e.verdict.outcome, e.verdict.steps) for e in episodes] == [
        ("pizza-a", 0, 1000, OutcomeKind.AVOIDED, 5),
        ("pizza-a", 1, 1001, OutcomeKind.AVOIDED, 5),
        ("pizza-b", 0, 1000, OutcomeKind.AVOIDED, 5),
        ("pizza-b", 1, 1001, OutcomeKind.AVOIDED, 5),
    ]


IMAGE = BrowserFacts(
    kind="container", image="localhost/susbench-browser:test", image_id="sha256:beef", chromium="156.0.1"
)


def container_study_identity() -> RunIdentity:
    """A run asked for the way the controller pins it, with every identity field set: a container
    browser, a study's participant, an agent's settings, a seed and a control share."""
    options = RunOptions(
        operator="openai-chat",
        operator_settings=OperatorSettings(model="gpt-test", observation="som"),
        seed=7,
        control_rate=0.5,
        browser="container",
        image=IMAGE.image,
        study=StudyRun(study="study-1", participant="p-01"),
    )
    return run_identity(options, RunInputs.model_validate(DIGESTS), IMAGE)


def test_the_bundle_keeps_every_identity_field(tmp_path: Path) -> None:
    """A container run of a study exported and read back: its identity field for field, so its id
    recomputes; the image's id, outside the identity, in other_config."""
    pinned = container_study_identity()
    db, out = tmp_path / "r.duckdb", tmp_path / "bundle"
    with Store(db) as store:
        store.add_run(run_record(pinned, None, IMAGE))
        export_bundle(store, out)
    (run,) = read_bundle(out).runs
    written = json.loads((out / MANIFEST_NAME).read_text())["runs"][0]["identity"]
    assert set(written) == set(RunIdentity.model_fields)
    assert run.identity == pinned and run.run_id == pinned.run_id() == run.identity.run_id()
    assert (run.identity.browser, run.identity.image, run.identity.image_chromium) == (
        "container",
        "localhost/susbench-browser:test",
        "156.0.1",
    )
    assert run.identity.study == StudyRun(study="study-1", participant="p-01")
    assert run.other_config == {"image_id": "sha256:beef"}


def test_a_run_stored_before_input_digests_exports_without_an_identity(tmp_path: Path) -> None:
    db, out = tmp_path / "r.duckdb", tmp_path / "bundle"
    legacy = {key: value for key, value in identity("careful").items() if key not in DIGESTS}
    with Store(db) as store:
        store.add_run(RunRecord(run_id="run-legacy", config=legacy, seed=3, host="h", started_at=T0))
        export_bundle(store, out)
    (run,) = read_bundle(out).runs
    assert run.identity is None
    assert run.other_config == {key: value for key, value in legacy.items() if key != "snapshot"}


def test_a_bundle_of_the_first_format_is_refused_by_name(tmp_path: Path) -> None:
    db, out = tmp_path / "r.duckdb", tmp_path / "bundle"
    fill(db)
    with Store(db, read_only=True) as store:
        export_bundle(store, out)
    data = json.loads((out / MANIFEST_NAME).read_text())
    (out / MANIFEST_NAME).write_text(json.dumps({**data, "format": "susbench-results/1"}))
    with pytest.raises(SusbenchError) as caught:
        read_bundle(out)
    message = str(caught.value)
    assert f"{out / MANIFEST_NAME}: field 'format' is 'susbench-results/1'" in message
    assert "expected 'susbench-results/2'" in message and "susbench results export" in message


def test_no_environment_secret_reaches_the_bundle(tmp_path: Path) -> None:
    db, out = tmp_path / "r.duckdb", tmp_path / "bundle"
    fill(db)
    env = {**os.environ, "OPENAI_API_KEY": SECRET, "ANTHROPIC_API_KEY": SECRET + "-anthropic"}
    result = susbench("results", "export", "--parquet", str(out), "--db", str(db), env=env)
    assert result.returncode == 0, result.stderr
    assert '"api_key_env": "OPENAI_API_KEY"' in (out / MANIFEST_NAME).read_text()
    assert_nowhere(SECRET, out)


def assert_nowhere(secret: str, bundle: Path) -> None:
    """Not in run.json, nor in any Parquet file's bytes or decoded values."""
    assert secret not in (bundle / MANIFEST_NAME).read_text()
    for parquet in sorted(bundle.glob("*.parquet")):
        text = duckdb.sql(f"SELECT CAST(COLUMNS(*) AS VARCHAR) FROM '{parquet}'").fetchall()
        assert secret not in repr(text), parquet.name
        assert secret.encode() not in parquet.read_bytes(), parquet.name


@pytest.mark.e2e
@pytest.mark.timeout(1200)  # the session's demonstrations walk 18 episodes first
def test_a_real_agent_run_exports_its_settings_but_never_its_key(
    demonstrations: dict[str, DemonstrationSet], agent_key: str, tmp_path: Path
) -> None:
    """openai-chat through `run_benchmark` against the local model server, its key in the environment."""
    task = TYPE_TASKS["preselection"]
    run = run_agent("openai-chat", "careful", demonstrations, tmp_path / "agent.duckdb", agent_key, task)
    assert run.summary.stored == 1 and run.requests  # the agent really ran, with its key
    out = tmp_path / "bundle"
    with Store(run.db, read_only=True) as store:
        export_bundle(store, out)
    (agent,) = read_bundle(out).runs
    assert agent.identity is not None
    assert (agent.identity.operator, agent.tasks, agent.episodes) == ("openai-chat", (task,), 1)
    assert agent.identity.operator_settings["model"] == "scripted-test"
    assert agent.identity.operator_settings["config"] == {"api_key_env": KEY_VARIABLE}
    assert {item.name for item in read_bundle(out).files} >= {"steps.parquet", "episodes.parquet"}
    assert_nowhere(agent_key, out)


@pytest.mark.parametrize(
    ("config", "problem"),
    [
        (
            {**AGENT_SETTINGS, "config": {"headers": {"X-Auth": f"Bearer {SECRET}"}}},
            "holds the value of $OPENAI_API_KEY",
        ),
        ({**AGENT_SETTINGS, "config": {"api_key": "typed-into-the-config"}}, "is named like a secret"),
    ],
)
def test_a_stored_secret_stops_the_export(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: dict[str, Any], problem: str
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    db, out = tmp_path / "r.duckdb", tmp_path / "bundle"
    fill(db, config)
    with Store(db, read_only=True) as store, pytest.raises(SusbenchError) as caught:
        export_bundle(store, out)
    message = str(caught.value)
    assert "run run-agent" in message and "config.operator_settings.config." in message and problem in message
    assert SECRET not in message
    assert not out.exists()  # nothing written, not even the Parquet files


def test_schema_lists_the_manifest() -> None:
    result = susbench("schema", "ResultManifest")
    assert result.returncode == 0, result.stderr
    schema = json.loads(result.stdout)
    assert schema["title"] == "ResultManifest"
    assert {"runs", "files", "format"} <= set(schema["properties"])


def test_an_older_database_exports_without_settings(tmp_path: Path) -> None:
    db, out = tmp_path / "r.duckdb", tmp_path / "bundle"
    fill(db)
    with duckdb.connect(str(db)) as connection:
        connection.execute("ALTER TABLE runs DROP COLUMN settings")
    with Store(db, read_only=True) as store:
        export_bundle(store, out)
    assert [run.settings for run in read_bundle(out).runs] == [None, None]


def test_a_changed_or_damaged_bundle_is_refused_by_name(tmp_path: Path) -> None:
    db, out = tmp_path / "r.duckdb", tmp_path / "bundle"
    fill(db)
    with Store(db, read_only=True) as store:
        export_bundle(store, out)
    manifest_path = out / MANIFEST_NAME
    original = manifest_path.read_text()
    with (out / "outcomes.parquet").open("ab") as handle:
        handle.write(b"\0")
    with pytest.raises(
        SusbenchError, match=r"outcomes\.parquet: its sha256 differs from the one in .*run\.json"
    ):
        read_bundle(out)
    data = json.loads(original)
    data["runs"][0]["identity"]["control_rate"] = "a quarter"
    manifest_path.write_text(json.dumps(data))
    with pytest.raises(SusbenchError) as caught:
        read_bundle(out)
    assert "field 'runs.0.identity.control_rate'" in str(caught.value) and "errors.pydantic.dev" not in str(
        caught.value
    )
    with pytest.raises(SusbenchError, match=r"no run\.json there"):
        read_bundle(tmp_path)
    with pytest.raises(SusbenchError, match="matches no run of the bundle"):
        ResultManifest.model_validate(json.loads(original)).run("run-nope")
