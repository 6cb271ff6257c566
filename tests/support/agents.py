"""Agent fixtures: demonstrations of one short task per pattern type, walked once per session by the
scripted baselines on the bundled snapshot, and a helper that runs an agent operator through
`run_benchmark` (real worker processes, real DuckDB) against a local model server playing them."""

from __future__ import annotations

import fcntl
import hashlib
import json
import secrets
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from playwright.sync_api import Playwright

import susbench.agents
import susbench.browser
import susbench.operators
import susbench.snapshot
from susbench import replayer
from susbench.agents.demonstration import DemonstrationSet
from susbench.agents.servers import Captured, Fault, ModelServer, ScriptedPolicy, model_server
from susbench.agents.walker import record_demonstrations
from susbench.browser import LocalBackend, chromium_version, find_chromium
from susbench.catalog.injections import build_extension, load_injections
from susbench.catalog.tasks import load_tasks
from susbench.controller import RunOptions, RunSummary, default_snapshot, run_benchmark
from susbench.controller.traffic import ReplayTraffic
from susbench.core.models import Task
from susbench.core.paths import cache_dir
from susbench.operators import OperatorSettings
from susbench.replayer.factory import replay_server
from susbench.snapshot import Snapshot
from tests.support.type_tasks import SELECTOR, TYPE_TASKS

EXPECTED = {"naive": "not_avoided", "careful": "avoided"}
POLICIES = ("naive", "careful")
KEY_VARIABLE = "AGENT_TEST_KEY"


@dataclass(frozen=True)
class AgentRun:
    """One `run_benchmark` of an agent operator against a scripted model server."""

    operator: str
    policy: str
    settings: OperatorSettings
    summary: RunSummary
    db: Path
    requests: tuple[Captured, ...]
    key: str


def _sources_digest(*modules: ModuleType) -> str:
    """The Python files of `modules` (a package: all of its files), in one digest."""
    digest = hashlib.sha256()
    for module in modules:
        where = Path(str(module.__file__))
        files = sorted(where.parent.rglob("*.py")) if where.name == "__init__.py" else [where]
        for path in files:
            name = path.relative_to(where.parent.parent).as_posix()  # the same in every checkout
            digest.update(name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def demonstrations_key(snapshot: Path, extension: Path, items: list[tuple[Task, str]]) -> str:
    """Everything a walk depends on: the snapshot, the built extension (its sources and store), the
    tasks with their injections, the walker and what it walks through, and the Chromium it drives."""
    digest = hashlib.sha256()
    with snapshot.open("rb") as handle:
        digest.update(hashlib.file_digest(handle, "sha256").digest())
    digest.update((extension / "BUILD").read_bytes())
    digest.update(json.dumps([(task.model_dump(mode="json"), chosen) for task, chosen in items]).encode())
    code = (susbench.agents, susbench.browser, susbench.operators, susbench.snapshot, replayer)
    digest.update(_sources_digest(*code, sys.modules[__name__]).encode())
    digest.update(chromium_version(find_chromium()).encode())
    return digest.hexdigest()[:24]


def _walk(
    web_playwright: Playwright, snapshot: Path, extension: Path, items: list[tuple[Task, str]]
) -> dict[str, DemonstrationSet]:
    with Snapshot.open(snapshot) as opened:
        look = opened.manifest.look
    with replay_server(snapshot, "direct") as server:

        def task_route(task: Task) -> ReplayTraffic:
            return ReplayTraffic(server, task.capture_plan().id)

        backend = LocalBackend(web_playwright)
        return {
            policy: record_demonstrations(backend, task_route, look, extension, items, policy)
            for policy in POLICIES
        }


@pytest.fixture(scope="session")
def demonstrations(web_playwright: Playwright) -> dict[str, DemonstrationSet]:
    """Naive and careful walks of the nine type tasks (each checked by the extension as it walks).

    Walked once per machine for what they depend on and kept in the cache under that digest; the
    first process to need them walks while any other (an xdist worker) waits on the lock."""
    snapshot = default_snapshot()
    injections = {injection.id: injection for injection in load_injections()}
    tasks = {task.id: task for task in load_tasks()}
    items = [(tasks[task_id], tasks[task_id].injections[0]) for task_id in TYPE_TASKS.values()]
    extension = build_extension(injections.values())
    folder = cache_dir() / "test-demonstrations"
    folder.mkdir(parents=True, exist_ok=True)
    key = demonstrations_key(snapshot, extension, items)
    paths = {policy: folder / f"{key}-{policy}.json" for policy in POLICIES}
    with open(folder / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if all(path.is_file() for path in paths.values()):
            return {policy: DemonstrationSet.load(path) for policy, path in paths.items()}
        walked = _walk(web_playwright, snapshot, extension, items)
        for policy, demonstrations in walked.items():
            staging = paths[policy].with_suffix(".partial")
            demonstrations.save(staging).replace(paths[policy])
        return walked


@pytest.fixture(scope="session")
def agent_key() -> Iterator[str]:
    """A fresh API key in the environment the workers inherit; the model server insists on it."""
    key = f"sk-agents-{secrets.token_hex(16)}"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(KEY_VARIABLE, key)
        yield key


def base_url(operator: str, server: ModelServer) -> str:
    return server.anthropic_base_url if operator == "anthropic-cu" else server.openai_base_url


def run_agent(
    operator: str,
    policy: str,
    demonstrations: dict[str, DemonstrationSet],
    db: Path,
    key: str,
    tasks: str = SELECTOR,
    faults: tuple[Fault, ...] = (),
    config: dict[str, Any] | None = None,
    parallel: int = 2,
    before: Callable[[ModelServer], None] | None = None,
    live: bool = False,
    **settings: Any,
) -> AgentRun:
    """Run `operator` on `tasks` against a fresh server playing `policy` (`before` may set HTTP
    faults on it first); every request is kept."""
    with model_server(ScriptedPolicy(demonstrations[policy], faults), api_key=key) as server:
        if before is not None:
            before(server)
        chosen = OperatorSettings(
            model="scripted-test",
            base_url=base_url(operator, server),
            config={"api_key_env": KEY_VARIABLE, **(config or {})},
            config_source="test config",
            **settings,
        )
        summary = run_benchmark(
            RunOptions(
                operator=operator, operator_settings=chosen, tasks=tasks, db=db, parallel=parallel, live=live
            )
        )
        return AgentRun(operator, policy, chosen, summary, db, tuple(server.requests), key)
