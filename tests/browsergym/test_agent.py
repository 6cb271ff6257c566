"""A BrowserGym-protocol agent (`susbench_browsergym.agent.ChatModelAgent`), driven by a chat model at
a local OpenAI-compatible endpoint (the scripted server replaying demonstrations in BrowserGym's
dialect), runs two tasks through `gymnasium.make("browsergym/susbench.<task>")`: both episodes are
stored under `browsergym:<agent>` with their BrowserGym steps, scored as the scripted model plays
them, shown by `susbench report`, and nothing the BrowserGym side sent the model leaks the answer."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from susbench.agents.demonstration import DemonstrationSet
from susbench.agents.servers import ScriptedPolicy, model_server
from susbench.catalog.injections import load_injections
from susbench.catalog.tasks import load_tasks
from susbench.cli.main import app
from susbench.results.store import Store, trace_folder
from tests.support.agents import EXPECTED, KEY_VARIABLE
from tests.support.browsergym import Driver
from tests.support.leaks import answer_secrets, find_leaks
from tests.support.type_tasks import TYPE_TASKS

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(1800)]
RUNS = {"naive": TYPE_TASKS["confirm_shaming"], "careful": TYPE_TASKS["fake_social_proof"]}
AGENT = "chat-agent"


@pytest.fixture(scope="module")
def agent_driver(browsergym_python: Path, agent_key: str) -> Iterator[Driver]:
    driver = Driver(browsergym_python)  # started after agent_key: it inherits the key's variable
    yield driver
    driver.stop()


@pytest.fixture(scope="module")
def agent_runs(
    agent_driver: Driver, demonstrations: dict[str, DemonstrationSet], agent_key: str, tmp_path_factory
) -> tuple[Path, dict[str, dict], list]:
    db = tmp_path_factory.mktemp("browsergym-agent") / "results.duckdb"
    runs, requests = {}, []
    for policy, task_id in RUNS.items():
        with model_server(ScriptedPolicy(demonstrations[policy]), api_key=agent_key) as server:
            runs[policy] = agent_driver.call(
                "agent",
                task=task_id,
                db=str(db),
                agent=AGENT,
                base_url=server.openai_base_url,
                model="scripted-test",
                api_key_env=KEY_VARIABLE,
                max_steps=20,
            )
            requests += server.requests
    return db, runs, requests


def test_both_episodes_are_stored_and_scored_as_played(
    agent_runs: tuple[Path, dict[str, dict], list],
) -> None:
    db, runs, _ = agent_runs
    with Store(db, read_only=True) as store:
        _, rows = store.query(
            "SELECT episode_id, operator, task_id, outcome, completed FROM episode_outcomes"
        )
    expected = {
        (runs[policy]["episode_id"], f"browsergym:{AGENT}", task_id, EXPECTED[policy], True)
        for policy, task_id in RUNS.items()
    }
    assert set(rows) == expected
    assert all(run["rewards"][-1] == 1.0 for run in runs.values())


def test_the_steps_are_browsergym_observations_and_actions(
    agent_runs: tuple[Path, dict[str, dict], list],
) -> None:
    db, runs, _ = agent_runs
    for run in runs.values():
        with Store(db, read_only=True) as store:
            steps = store.episode_steps(run["episode_id"])
        assert [step.actions[0]["action"] for step in steps] == run["actions"]
        for step in steps:
            assert step.observation == "browsergym" and "[" in step.observation_text
            assert (trace_folder(db) / run["episode_id"] / str(step.screenshot)).is_file()
    with Store(db, read_only=True) as store:
        _, identity = store.query("SELECT DISTINCT config FROM runs")
    assert all('"browsergym"' in str(row[0]) and "0.14.3" in str(row[0]) for row in identity)


def test_susbench_report_shows_the_browsergym_operator(
    agent_runs: tuple[Path, dict[str, dict], list],
) -> None:
    db, _, _ = agent_runs
    result = CliRunner().invoke(app, ["report", "--db", str(db), "--no-model"], env={"COLUMNS": "240"})
    assert result.exit_code == 0, result.output
    assert f"browsergym:{AGENT}" in result.output


def test_nothing_the_browsergym_side_sends_leaks_the_answer(
    agent_runs: tuple[Path, dict[str, dict], list],
) -> None:
    _, _, requests = agent_runs
    assert requests and {request.path for request in requests} == {"/v1/chat/completions"}
    secrets = answer_secrets({injection.id: injection for injection in load_injections()}, load_tasks())
    assert find_leaks(requests, secrets) == []
