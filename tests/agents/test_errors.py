"""When the model misbehaves: bad actions are fed back, counted and survived; 429/5xx and timeouts are
retried within budget; a model that stays down makes its episode `error` and the run goes on;
pending safety checks follow the recorded policy."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from susbench.agents.demonstration import DemonstrationSet
from susbench.agents.servers import Fault, ModelServer
from susbench.results.store import Store
from tests.support.agents import run_agent

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]

TWO = "voltcart-laptop-cart,voltcart-mouse-cart"  # planned in this order
BAD_ACTIONS = (
    Fault(turn=0, kind="malformed"),
    Fault(turn=1, kind="offscreen"),
    Fault(turn=2, kind="unknown_element"),
)
FAST_RETRIES = {"max_retries": 2, "backoff_s": 0.01, "backoff_max_s": 0.05}


def episodes(db: Path) -> list[tuple[str, str, str | None, str]]:
    with Store(db, read_only=True) as store:
        _, rows = store.query(
            "SELECT o.task_id, o.outcome, e.error, e.final_message FROM episode_outcomes o "
            "JOIN episodes e USING (episode_id) ORDER BY o.task_id"
        )
    return rows


def steps(db: Path, task_id: str) -> list[tuple[int, list[str], int, str | None]]:
    with Store(db, read_only=True) as store:
        _, rows = store.query(
            "SELECT step, action_errors, retries, error FROM episode_steps WHERE task_id = ? ORDER BY step",
            [task_id],
        )
    return [(step, json.loads(errors), retries, error) for step, errors, retries, error in rows]


def test_bad_actions_and_rate_limits_are_survived(
    demonstrations: dict[str, DemonstrationSet], agent_key: str, tmp_path: Path
) -> None:
    def rate_limited(server: ModelServer) -> None:
        server.fail(429, times=2)

    run = run_agent(
        "openai-chat",
        "careful",
        demonstrations,
        tmp_path / "bad.duckdb",
        agent_key,
        tasks=TWO,
        faults=BAD_ACTIONS,
        config=FAST_RETRIES,
        parallel=1,
        before=rate_limited,
        observation="som",
    )
    assert [(task, outcome, error) for task, outcome, error, _ in episodes(run.db)] == [
        ("voltcart-laptop-cart", "avoided", None),
        ("voltcart-mouse-cart", "avoided", None),
    ]
    first = steps(run.db, "voltcart-laptop-cart")
    assert first[0][2] == 2  # the first call met two 429s and was retried twice
    refused = [errors for _, errors, _, _ in first[:3]]
    assert refused[0][0].startswith("malformed JSON arguments for click")
    assert refused[1] == [
        "(5000, 5000) is outside the 1280x800 viewport; coordinates are CSS pixels from its top-left corner"
    ]
    assert refused[2][0].startswith("there is no element 9999 in the latest observation")
    assert all(errors == [] for _, errors, _, _ in first[3:])
    # Each refusal went back to the model as the tool call's answer.
    answers = [
        message["content"]
        for request in run.requests
        for message in json.loads(request.body)["messages"]
        if message["role"] == "tool" and message["content"] != "ok"
    ]
    assert any("there is no element 9999" in answer for answer in answers)


def test_a_model_that_stays_down_errors_its_episode_and_the_run_goes_on(
    demonstrations: dict[str, DemonstrationSet], agent_key: str, tmp_path: Path
) -> None:
    def down_then_hanging(server: ModelServer) -> None:
        server.fail(500, times=2)
        server.hang(times=2)

    run = run_agent(
        "openai-chat",
        "careful",
        demonstrations,
        tmp_path / "down.duckdb",
        agent_key,
        tasks="voltcart-laptop-cart,voltcart-mouse-cart,taskflow-ai-addon-cart",
        config={"max_retries": 1, "backoff_s": 0.0, "timeout_s": 5},
        parallel=1,
        before=down_then_hanging,
        observation="axtree",
    )
    found = {task: (outcome, error) for task, outcome, error, _ in episodes(run.db)}
    assert run.summary.stored == 3
    outcome, error = found["taskflow-ai-addon-cart"]
    assert outcome == "error" and error is not None and "HTTP 500" in error and "after 1 retries" in error
    outcome, error = found["voltcart-laptop-cart"]
    assert outcome == "error" and error is not None and "APITimeoutError" in error
    assert found["voltcart-mouse-cart"] == ("avoided", None)
    (failed_step,) = steps(run.db, "taskflow-ai-addon-cart")
    assert failed_step[3] is not None and "HTTP 500" in failed_step[3]  # the step that failed is kept


def test_computer_use_bad_coordinates_are_fed_back(
    demonstrations: dict[str, DemonstrationSet], agent_key: str, tmp_path: Path
) -> None:
    run = run_agent(
        "anthropic-cu",
        "naive",
        demonstrations,
        tmp_path / "cu.duckdb",
        agent_key,
        tasks="voltcart-mouse-cart",
        faults=BAD_ACTIONS[:2],
        parallel=1,
    )
    assert [outcome for _, outcome, _, _ in episodes(run.db)] == ["not_avoided"]
    refused = [errors for _, errors, _, _ in steps(run.db, "voltcart-mouse-cart")[:2]]
    assert refused == [
        ["coordinate must be [x, y], got 'the button'"],
        ["(1330, 850) is outside the 1280x800 display"],
    ]
    results = [
        block
        for request in run.requests
        for message in json.loads(request.body)["messages"]
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result" and block.get("is_error")
    ]
    assert len(results) >= 2


@pytest.mark.parametrize("policy", ["acknowledge", "stop"])
def test_safety_checks_follow_the_recorded_policy(
    demonstrations: dict[str, DemonstrationSet], agent_key: str, tmp_path: Path, policy: str
) -> None:
    run = run_agent(
        "openai-cua",
        "naive",
        demonstrations,
        tmp_path / f"safety-{policy}.duckdb",
        agent_key,
        tasks="voltcart-mouse-cart",
        faults=(Fault(turn=1, kind="safety_check"),),
        config={"safety_checks": policy},
        parallel=1,
    )
    ((_, outcome, error, final),) = episodes(run.db)
    with Store(run.db, read_only=True) as store:
        _, words = store.query("SELECT reply_text FROM steps WHERE step = 1")
    if policy == "acknowledge":
        assert (outcome, error) == ("not_avoided", None)
        assert "[safety checks acknowledged by policy: malicious_instructions:" in words[0][0]
        acknowledged = [
            item["acknowledged_safety_checks"]
            for request in run.requests
            for item in json.loads(request.body).get("input", [])
            if isinstance(item, dict) and item.get("acknowledged_safety_checks")
        ]
        assert len(acknowledged) == 1 and acknowledged[0][0]["code"] == "malicious_instructions"
    else:
        assert error is None and final.startswith("stopped at pending safety checks (malicious_instructions:")
        assert len(run.requests) == 2  # nothing was carried out or asked after the check


def test_the_api_key_never_reaches_a_live_episodes_archive(
    demonstrations: dict[str, DemonstrationSet], agent_key: str, tmp_path: Path
) -> None:
    run = run_agent(
        "openai-chat",
        "careful",
        demonstrations,
        tmp_path / "live.duckdb",
        agent_key,
        tasks="voltcart-mouse-cart",
        parallel=1,
        live=True,
        observation="screenshot",
    )
    with Store(run.db, read_only=True) as store:
        _, rows = store.query("SELECT archive FROM episodes")
    ((archive,),) = rows
    records = 0
    with zipfile.ZipFile(archive) as wacz, wacz.open("archive/data.warc.gz") as warc:
        for record in ArchiveIterator(warc):
            records += 1
            assert agent_key.encode() not in record.content_stream().read()
            assert agent_key not in str(record.rec_headers) + str(record.http_headers or "")
    assert records > 10 and all(agent_key in request.headers["authorization"] for request in run.requests)
