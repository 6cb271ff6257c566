"""WordPress from its bundled snapshot, offline: every task's flow replays whole from the task's own
session and ends on the page its completion names (the newsletter's thanks, a comment held for
moderation, the article found, the membership's welcome), and the scripted baselines are exact
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
from susbench.core.urlpattern import url_matches
from susbench.replayer.direct import DirectReplayServer
from tests.support.app_baselines import assert_baselines_exact

APP = "wordpress"
HOST = "fernhilljournal.test"
STEP_TIMEOUT_MS = 20_000
INJECTIONS = {injection.id: injection for injection in load_injections()}
TASKS = load_tasks(TASK_SETS[APP].tasks_dir, INJECTIONS)
SNAPSHOT = task_set_snapshot(TASK_SETS[APP])
ANSWERED = ("exact", "canonical", "fuzzy")


def test_the_app_has_its_tasks_and_every_type() -> None:
    assert len(TASKS) >= 12
    types = {INJECTIONS[injection].type for task in TASKS for injection in task.injections}
    assert len(types) == 9, types
    assert {task.site for task in TASKS} == {HOST}
    assert {INJECTIONS[injection].site for task in TASKS for injection in task.injections} == {HOST}


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


@pytest.mark.e2e
@pytest.mark.parametrize("task", TASKS, ids=[task.id for task in TASKS])
def test_each_flow_replays_whole_from_its_own_session(
    task: Task, server: DirectReplayServer, browser: tuple[Browser, BrowserProfile]
) -> None:
    episode = server.new_episode(task.capture_plan().id)
    launched, profile = browser
    context = fresh_context(launched, profile)
    try:
        page = context.new_page()
        page.goto(task.start_url, wait_until="load")
        for step in task.reference_path:
            if step.action != "decide":
                perform_step(page, step, STEP_TIMEOUT_MS)
                page.wait_for_load_state("load")
        final = page.url
        assert task.completion is not None and task.completion.url and task.completion.selector
        assert url_matches(task.completion.url, final), final
        assert page.locator(task.completion.selector).count() > 0, f"{final}: no {task.completion.selector}"
    finally:
        context.close()
    served = [entry for entry in server.log if entry.episode_number == episode and HOST in entry.url]
    missed = sorted({entry.url for entry in served if entry.kind not in ANSWERED})
    assert len(served) - len(missed) >= 0.99 * len(served), f"{task.id}: not in the snapshot: {missed}"


@pytest.mark.e2e
@pytest.mark.timeout(900)
def test_baselines_are_exact_on_a_task_of_each_type(tmp_path: Path) -> None:
    assert_baselines_exact(APP, HOST, tmp_path / "wordpress.duckdb")
