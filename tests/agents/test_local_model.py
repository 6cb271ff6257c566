"""A real language model as the subject: the packaged SmolLM2-135M on llama.cpp's server on this CPU,
through the same `openai-chat` operator cloud models use, in real Chromium with the extension.

Only what is true of any model is asserted: each episode is decided or ends in a counted `error`
(a spent budget says so); the trace holds the model's own replies byte for byte; every reply that is
not a valid action is counted as a refused action; nothing sent to the model holds the ground truth
or the key; the run's identity names the model file and the runtime. Which choice the model made
is never asserted. The budgets are tight (one model turn, short replies) to keep the suite short.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from susbench.agents.actions import ActionRefused, parse_action
from susbench.agents.local_model import KEY_VARIABLE, LocalModelSettings, local_run_fields, packaged_model
from susbench.agents.openai_chat import read_json_action
from susbench.agents.servers import Captured
from susbench.catalog.injections import load_injections
from susbench.catalog.tasks import load_tasks
from susbench.controller import RunOptions, RunSummary, run_benchmark
from susbench.results.store import Store, trace_folder
from tests.support.leaks import answer_secrets, find_leaks
from tests.support.local_model import RelayedModel

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(3600)]

TASKS = "voltcart-mouse-cart,threadline-tee-size-s-cart"
SETTINGS = LocalModelSettings(max_steps=1, max_tokens=32)
DECIDED = {"avoided", "not_avoided", "not_encountered", "tampered"}


@dataclass(frozen=True)
class LocalRun:
    """The run's database and what the run itself sent the model and got back. The relay is the
    session's (the authoring test may have used it first on the same worker), so only its slice counts."""

    db: Path
    summary: RunSummary
    requests: list[Captured]
    replies: list[bytes]


@pytest.fixture(scope="module")
def local_run(local_model: RelayedModel, tmp_path_factory: pytest.TempPathFactory) -> LocalRun:
    db = tmp_path_factory.mktemp("local-model") / "local.duckdb"
    fields = local_run_fields(local_model.server, tasks=TASKS, settings=SETTINGS)
    before = len(local_model.relay.requests)
    summary = run_benchmark(RunOptions(**fields, db=db))
    with local_model.relay.lock:
        return LocalRun(db, summary, local_model.relay.requests[before:], local_model.relay.replies[before:])


def rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    with Store(db, read_only=True) as store:
        return store.query(sql)[1]


def test_each_episode_is_decided_or_a_counted_error(local_run: LocalRun) -> None:
    db = local_run.db
    episodes = rows(
        db,
        "SELECT o.outcome, e.error, coalesce(a.steps, 0) FROM episode_outcomes o "
        "JOIN episodes e USING (episode_id) LEFT JOIN agent_episodes a USING (episode_id)",
    )
    assert len(episodes) == 2  # an episode that timed out before its first reply has no steps
    for outcome, error, steps in episodes:
        assert 0 <= steps <= SETTINGS.max_steps
        assert outcome in DECIDED or (outcome == "error" and error), (outcome, error)
        if error and steps == SETTINGS.max_steps and "budget" not in error:
            pytest.fail(f"an episode that used every turn ended without saying its budget was spent: {error}")


def test_the_trace_holds_the_models_own_replies_and_counts_invalid_ones(local_run: LocalRun) -> None:
    db = local_run.db
    replies = {reply.decode() for reply in local_run.replies}
    steps = rows(
        db,
        "SELECT episode_id, step, reply, reply_text, action_errors, actions FROM steps "
        "ORDER BY episode_id, step",
    )
    last = {episode: step for episode, step, *_ in steps}
    assert steps
    invalid = 0
    for episode, step, reply, reply_text, errors, actions in steps:
        assert reply in replies  # the server's body, as it came
        assert json.loads(reply)["choices"][0]["message"]["content"] == reply_text
        data, problem = read_json_action(reply_text)
        if data is None and problem is None:  # plain words: the model's final message
            assert step == last[episode]
        elif data is None or not _parses(data):  # refused before it ran, and fed back
            invalid += 1
            assert len(_listed(errors)) == 1 and _listed(actions) == [], reply_text
    refused = rows(db, "SELECT sum(action_errors) FROM agent_episodes")[0][0]
    assert refused >= invalid


def test_nothing_sent_to_the_model_holds_the_answer_or_the_key(
    local_run: LocalRun, local_model: RelayedModel
) -> None:
    db = local_run.db
    requests = [r for r in local_run.requests if r.path.endswith("/chat/completions")]
    assert len(requests) == rows(db, "SELECT count(*) FROM steps")[0][0]
    injections = {injection.id: injection for injection in load_injections()}
    assert find_leaks(requests, answer_secrets(injections, load_tasks())) == []
    key = local_model.server.api_key
    assert all(request.headers["authorization"] == f"Bearer {key}" for request in requests)
    assert all(key.encode() not in request.body for request in requests)
    stored = [db, *trace_folder(db).rglob("*")]
    assert [path for path in stored if path.is_file() and key.encode() in path.read_bytes()] == []
    # The key's variable may be named as `api_key_env` (where to read the key from), nowhere else.
    for (config,) in rows(db, "SELECT config FROM runs"):
        named = json.dumps(json.loads(config)).replace(f'"api_key_env": "{KEY_VARIABLE}"', "")
        assert KEY_VARIABLE not in named


def test_the_run_identity_names_the_model_file_and_the_runtime(local_run: LocalRun) -> None:
    db = local_run.db
    (config,) = rows(db, "SELECT config FROM runs")[0]
    served = json.loads(config)["operator_settings"]["config"]["served_by"]
    assert served["model_sha256"] == hashlib.sha256(packaged_model().read_bytes()).hexdigest()
    assert served["runtime"] == "xllamacpp" and served["runtime_version"]
    assert (served["seed"], served["temperature"], served["threads"]) == (20261201, 0.0, 2)


def _parses(data: dict[str, Any]) -> bool:
    try:
        parse_action(data)
    except ActionRefused:
        return False
    return True


def _listed(value: Any) -> list[Any]:
    return json.loads(value) if isinstance(value, str) else list(value)
