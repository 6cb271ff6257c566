"""Browser Use, in its own virtualenv, attached over CDP to the episode's Chromium, runs the nine pattern
types through its real loop with its own OpenAI client against the local chat-completions server
speaking its dialect (structured output, indexes from its own element list); the extension scores it
as the scripted model plays it, and nothing Browser Use sends leaks the answer. Coordinate clicks are
on (as Browser Use has them for some models): the demonstrations name no element for a few clicks
(controls in the shops' open shadow roots), and those are replayed at the demonstration's point."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from susbench.agents.demonstration import DemonstrationSet
from susbench.catalog.injections import load_injections
from susbench.catalog.tasks import load_tasks
from susbench.results.store import Store, trace_folder
from tests.support import outside_tools
from tests.support.agents import EXPECTED, AgentRun, run_agent
from tests.support.leaks import answer_secrets, find_leaks
from tests.support.type_tasks import TYPE_TASKS

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(3600)]


@pytest.fixture(scope="session")
def browser_use_python() -> Path:
    """Browser Use's virtualenv under the cache folder (installed by `make tools`)."""
    return outside_tools.browser_use_python()


# Careful over all nine types (declining, closing and unticking as well as clicking through);
# naive, taking the bait, on two.
POLICY_TYPES = {"careful": tuple(TYPE_TASKS), "naive": ("disguised_ad", "preselection")}


@pytest.fixture(scope="module")
def browser_use_runs(
    browser_use_python: Path,
    demonstrations: dict[str, DemonstrationSet],
    agent_key: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> list[AgentRun]:
    folder = tmp_path_factory.mktemp("browser-use-runs")
    return [
        run_agent(
            "browser-use",
            policy,
            demonstrations,
            folder / f"{policy}.duckdb",
            agent_key,
            tasks=",".join(TYPE_TASKS[kind] for kind in types),
            config={"coordinate_clicking": True},
        )
        for policy, types in POLICY_TYPES.items()
    ]


def outcomes(db: Path) -> dict[str, tuple[str, bool | None]]:
    with Store(db, read_only=True) as store:
        _, rows = store.query("SELECT pattern_type, outcome, completed FROM episode_outcomes")
    return {pattern_type: (outcome, completed) for pattern_type, outcome, completed in rows}


def test_browser_use_scores_every_type_as_scripted(browser_use_runs: list[AgentRun]) -> None:
    for run in browser_use_runs:
        expected = {pattern_type: (EXPECTED[run.policy], True) for pattern_type in POLICY_TYPES[run.policy]}
        assert outcomes(run.db) == expected, run.policy


def test_nothing_browser_use_sends_leaks_the_answer(browser_use_runs: list[AgentRun]) -> None:
    requests = [request for run in browser_use_runs for request in run.requests]
    assert {request.path for request in requests} == {"/v1/chat/completions"}
    assert all(b'"agent_output"' in request.body for request in requests)
    secrets = answer_secrets({injection.id: injection for injection in load_injections()}, load_tasks())
    assert find_leaks(requests, secrets) == []


def test_browser_use_steps_are_traced(browser_use_runs: list[AgentRun]) -> None:
    for run in browser_use_runs:
        with Store(run.db, read_only=True) as store:
            _, episodes = store.query(
                "SELECT episode_id, steps, tokens_in, tokens_out, cost_usd, model_s, wall_s "
                "FROM agent_episodes"
            )
        assert len(episodes) == len(POLICY_TYPES[run.policy])
        assert sum(steps for _, steps, *_ in episodes) == len(run.requests)
        for episode_id, steps, tokens_in, tokens_out, cost, model_s, wall_s in episodes:
            assert steps >= 2 and tokens_in > 0 and tokens_out > 0 and cost == 0.0
            assert 0 < model_s < wall_s
            with Store(run.db, read_only=True) as store:
                trace = store.episode_steps(episode_id)
            assert [step.index for step in trace] == list(range(steps))
            for step in trace:
                assert step.observation == "browser-use" and "[" in step.observation_text
                assert json.loads(step.reply)["choices"][0]["message"]["content"]
                assert step.actions and step.request_bytes > 0
                image = trace_folder(run.db) / episode_id / str(step.screenshot)
                assert (
                    image.is_file()
                    and step.screenshot_sha256 == hashlib.sha256(image.read_bytes()).hexdigest()
                )


def test_the_api_key_stays_out_of_what_is_stored(browser_use_runs: list[AgentRun], agent_key: str) -> None:
    for run in browser_use_runs:
        assert all(request.headers["authorization"] == f"Bearer {agent_key}" for request in run.requests)
        stored = [run.db, *trace_folder(run.db).rglob("*")]
        assert [path for path in stored if path.is_file() and agent_key.encode() in path.read_bytes()] == []
