"""Ghost from its bundled snapshot, offline: every task's flow replays whole (its pages' requests,
Ghost's members API calls and Portal's script among them, at least 99% answered from the task's
own session, and the flow ends where the task completes), and the scripted baselines are exact
(naive 0% and careful 100% avoided), complete and without a miss, on a task of each type a run draws
(tests/support/app_baselines.py; every task: benchmarks/results/catalog-full-2026-12-07.md)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Playwright

from susbench.browser import fresh_context, launch_browser, replay_profile
from susbench.browser.actions import perform_step
from susbench.browser.profiles import BrowserProfile
from susbench.catalog.injections import load_injections
from susbench.catalog.tasks import load_tasks
from susbench.catalog.tasksets import TASK_SETS, task_set_snapshot
from susbench.core.models import Task
from susbench.replayer.direct import DirectReplayServer
from tests.support.app_baselines import assert_baselines_exact

pytestmark = pytest.mark.e2e

APP = "ghost"
HOST = "quillpress.test"
STEP_TIMEOUT_MS = 20_000
INJECTIONS = {injection.id: injection for injection in load_injections()}
TASKS = load_tasks(TASK_SETS[APP].tasks_dir, INJECTIONS)
SNAPSHOT = task_set_snapshot(TASK_SETS[APP])


def test_the_app_has_its_tasks_and_seven_types() -> None:
    assert len(TASKS) >= 12
    types = {INJECTIONS[injection].type for task in TASKS for injection in task.injections}
    assert len(types) >= 7, types
    assert {task.site for task in TASKS} == {HOST}


@pytest.fixture(scope="module")
def server() -> Iterator[DirectReplayServer]:
    assert SNAPSHOT is not None
    with DirectReplayServer(SNAPSHOT) as replay:
        yield replay


@pytest.fixture(scope="module")
def browser(
    server: DirectReplayServer, web_playwright: Playwright
) -> Iterator[tuple[Browser, BrowserProfile]]:
    profile = replay_profile(server)
    with launch_browser(web_playwright, profile) as launched:
        yield launched, profile


@pytest.mark.parametrize("task", TASKS, ids=[task.id for task in TASKS])
def test_each_flow_replays_whole_from_its_own_session(
    task: Task, server: DirectReplayServer, browser: tuple[Browser, BrowserProfile]
) -> None:
    episode = server.new_episode(task.capture_plan().id)
    launched, profile = browser
    context = fresh_context(launched, profile)
    assert task.completion is not None
    try:
        page = context.new_page()
        page.goto(task.start_url, wait_until="load")
        for step in task.reference_path:
            if step.action != "decide":
                perform_step(page, step, STEP_TIMEOUT_MS)
                page.wait_for_load_state("load")
        if task.completion.selector is not None:
            page.wait_for_selector(task.completion.selector, timeout=STEP_TIMEOUT_MS)
        final = page.url
    finally:
        context.close()
    served = [entry for entry in server.log if entry.episode_number == episode and HOST in entry.url]
    answered = [entry for entry in served if entry.kind in ("exact", "canonical", "fuzzy")]
    missed = sorted({entry.url for entry in served if entry.kind not in ("exact", "canonical", "fuzzy")})
    assert len(answered) >= 0.99 * len(served), f"{task.id}: not in the snapshot: {missed}"
    if task.completion.url is not None:
        assert final.split("://", 1)[1].startswith(task.completion.url), final
    if "membership" not in task.id:
        assert any(entry.url.endswith("/members/api/send-magic-link/") for entry in answered), task.id


def test_baselines_are_exact_on_a_task_of_each_type(tmp_path: Path) -> None:
    assert_baselines_exact(APP, HOST, tmp_path / "ghost.duckdb")
