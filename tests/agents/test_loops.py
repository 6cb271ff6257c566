"""Each agent operator runs all nine pattern types through its real loop (official SDK, local server
speaking the vendor's wire protocol, worker processes, Chromium with the extension, bundled
snapshot) and scores as the scripted model plays it; nothing it sends leaks the answer.

The server plays demonstrations the scripted baselines walked with the ground truth (the
extension's choices with their roles, the tasks' reference paths): `naive` takes the bait, so the
episode must score not_avoided; `careful` avoids it: avoided.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from susbench.agents.demonstration import DemonstrationSet
from susbench.agents.servers import Captured
from susbench.catalog.injections import load_injections
from susbench.catalog.tasks import load_tasks
from susbench.results.store import Store, trace_folder
from tests.support.agents import EXPECTED, AgentRun, run_agent
from tests.support.leaks import answer_secrets, find_leaks
from tests.support.type_tasks import TYPE_TASKS

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(1800)]

ALL_TYPES = tuple(TYPE_TASKS)


@dataclass(frozen=True)
class Planned:
    """One run of the matrix: an operator with its settings, playing `policy` on `types`."""

    operator: str
    policy: str
    settings: dict[str, Any]
    config: dict[str, Any]
    types: tuple[str, ...] = ALL_TYPES


# Each wire format (chat completions, responses, messages) once over all nine types, with both
# policies among the three; every other setting (observation kinds, the JSON action format, the
# other computer tools, an unscaled Anthropic display) on two types with the other policy, the
# pairs together covering eight types.
RUNS = (
    Planned("openai-chat", "naive", {"observation": "som"}, {}),
    Planned("openai-cua", "careful", {}, {"tool": "computer"}),
    Planned(
        "anthropic-cu",
        "careful",
        {},
        {"tool_version": "computer_20251124", "display_width": 1024, "display_height": 640},
    ),
    Planned("openai-chat", "careful", {"observation": "axtree"}, {}, ("popup_ad", "trick_wording")),
    Planned(
        "openai-chat",
        "careful",
        {"observation": "screenshot", "action_format": "json"},
        {},
        ("disguised_ad", "forced_action"),
    ),
    Planned(
        "openai-cua", "naive", {}, {"tool": "computer_use_preview"}, ("preselection", "fake_social_proof")
    ),
    Planned(
        "anthropic-cu",
        "naive",
        {},
        {"tool_version": "computer_20250124"},
        ("confirm_shaming", "hidden_information"),
    ),
)


@pytest.fixture(scope="module")
def agent_runs(
    demonstrations: dict[str, DemonstrationSet], agent_key: str, tmp_path_factory: pytest.TempPathFactory
) -> list[tuple[Planned, AgentRun]]:
    folder = tmp_path_factory.mktemp("agent-runs")
    return [
        (
            planned,
            run_agent(
                planned.operator,
                planned.policy,
                demonstrations,
                folder / f"run-{index}.duckdb",
                agent_key,
                tasks=",".join(TYPE_TASKS[kind] for kind in planned.types),
                config=planned.config,
                **planned.settings,
            ),
        )
        for index, planned in enumerate(RUNS)
    ]


def outcomes(db: Path) -> dict[str, tuple[str, bool | None]]:
    with Store(db, read_only=True) as store:
        _, rows = store.query("SELECT pattern_type, outcome, completed FROM episode_outcomes")
    return {pattern_type: (outcome, completed) for pattern_type, outcome, completed in rows}


def test_every_operator_scores_every_type_as_scripted(agent_runs: list[tuple[Planned, AgentRun]]) -> None:
    assert {planned.operator for planned, _ in agent_runs if planned.types == ALL_TYPES} == {
        "openai-chat",
        "openai-cua",
        "anthropic-cu",
    }
    for planned, run in agent_runs:
        expected = {pattern_type: (EXPECTED[run.policy], True) for pattern_type in planned.types}
        assert outcomes(run.db) == expected, (run.operator, run.policy, run.settings)


def test_nothing_sent_to_a_model_leaks_the_answer(agent_runs: list[tuple[Planned, AgentRun]]) -> None:
    requests = [request for _, run in agent_runs for request in run.requests]
    injections = {injection.id: injection for injection in load_injections()}
    secrets = answer_secrets(injections, load_tasks())
    paths = {request.path.split("?")[0] for request in requests}
    assert paths == {"/v1/chat/completions", "/v1/responses", "/v1/messages"}
    assert sum(len(request.body) for request in requests) > 5_000_000  # screenshots and all
    assert find_leaks(requests, secrets) == []


@pytest.mark.parametrize(
    ("planted", "label"),
    [
        ("a DisguisedAd here", "pattern type disguised_ad"),
        ("the fake-social proof", "pattern type fake_social_proof"),
        ("pop-up ad", "pattern type popup_ad"),
        ('{"role": "safe"}', "role safe as an identifier"),
        ("the manipulative one", "role manipulative"),
        ("<button data-role=x>", "attribute data-role"),
        ("voltcart-item-sponsored-accessory", "injection id voltcart-item-sponsored-accessory"),
        ("#checkout-form [name=email]", "selector #checkout-form [name=email]"),
        ("SusBench", "the project's name"),
        ("Dark patterns", "the phrase dark pattern"),
    ],
)
def test_the_leak_search_finds_what_it_looks_for(planted: str, label: str) -> None:
    injections = {injection.id: injection for injection in load_injections()}
    secrets = answer_secrets(injections, load_tasks())
    body = {"messages": [{"role": "user", "content": [{"type": "text", "text": f"before {planted} after"}]}]}
    request = Captured("POST", "/v1/chat/completions", {}, json.dumps(body).encode(), 0.0)
    assert [leak for leak in find_leaks([request], secrets) if leak.startswith(f"{label} in")] != []
    hidden = {"input": [{"type": "input_image", "image_url": "data:image/png;base64," + planted}]}
    assert (
        find_leaks([Captured("POST", "/v1/responses", {}, json.dumps(hidden).encode(), 0.0)], secrets) == []
    )


def test_steps_and_accounting_are_stored(agent_runs: list[tuple[Planned, AgentRun]]) -> None:
    for planned, run in agent_runs:
        with Store(run.db, read_only=True) as store:
            _, episodes = store.query(
                "SELECT episode_id, steps, tokens_in, tokens_out, cost_usd, unpriced_steps, model_s, wall_s "
                "FROM agent_episodes"
            )
            _, requests_per_run = store.query("SELECT sum(request_bytes) FROM steps")
        assert len(episodes) == len(planned.types)
        assert sum(steps for _, steps, *_ in episodes) == len(run.requests)
        for episode_id, steps, tokens_in, tokens_out, cost, unpriced, model_s, wall_s in episodes:
            assert steps >= 2 and tokens_in > 0 and tokens_out > 0
            assert (cost, unpriced) == (0.0, 0)  # "scripted*" models are priced at zero in prices.yaml
            assert 0 < model_s < wall_s
            with Store(run.db, read_only=True) as store:
                trace = store.episode_steps(episode_id)
            assert [step.index for step in trace] == list(range(steps))
            for step in trace:
                image = trace_folder(run.db) / episode_id / str(step.screenshot)
                assert (
                    image.is_file()
                    and step.screenshot_sha256 == hashlib.sha256(image.read_bytes()).hexdigest()
                )
                assert step.reply and json.loads(step.reply)
        assert requests_per_run[0][0] == sum(len(request.body) for request in run.requests)


def test_the_api_key_goes_to_the_server_only(
    agent_runs: list[tuple[Planned, AgentRun]], agent_key: str
) -> None:
    for _, run in agent_runs:
        header = "x-api-key" if run.operator == "anthropic-cu" else "authorization"
        assert all(agent_key in request.headers[header] for request in run.requests)
        stored = [run.db, *trace_folder(run.db).rglob("*")]
        assert [path for path in stored if path.is_file() and agent_key.encode() in path.read_bytes()] == []
