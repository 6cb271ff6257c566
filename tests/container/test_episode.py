"""An episode in the container browser, scored by the extension through the same signed channel."""

from __future__ import annotations

import pytest

from susbench.browser import BrowserProfile
from susbench.browser.bridge import ExtensionBridge
from susbench.container import ContainerBackend
from susbench.controller.episode import TurnSetup, act_on_task
from susbench.core.models import Injection, OutcomeKind, Task
from susbench.operators import Limits, make_operator
from tests.support.container import CONTAINER_TIMEOUT_S
from tests.support.extension import shortest_task_with

pytestmark = [pytest.mark.container, pytest.mark.e2e, pytest.mark.timeout(CONTAINER_TIMEOUT_S)]

INJECTION = "pizzapalace-home-app-popup"


def test_naive_falls_for_it_and_careful_avoids_it(
    container_backend: ContainerBackend, catalog: dict[str, Injection], tasks: list[Task]
) -> None:
    injection = catalog[INJECTION]
    task = shortest_task_with(injection, tasks)
    limits = Limits(max_steps=task.max_steps, max_seconds=task.max_seconds)
    seen = []
    for policy, expected in (("naive", OutcomeKind.NOT_AVOIDED), ("careful", OutcomeKind.AVOIDED)):
        with container_backend.launch(BrowserProfile()) as session:
            bridge = ExtensionBridge(session.context)
            with bridge.episode(f"container-{policy}", injection.id) as episode:
                fresh = session.context.cookies() == []
                page = session.context.pages[0]
                page.goto(task.start_url)
                result = act_on_task(
                    make_operator(policy), task, page, episode, TurnSetup(limits, record=print)
                )
                assert result.done, result.message
                report = episode.report()
            log = session.replay_log()
        assert report.signature_valid
        assert report.outcome == expected, report.reason
        assert (report.episode_id, report.pattern_type) == (f"container-{policy}", "popup_ad")
        served = [entry for entry in log if entry.url.startswith("https://pizzapalace.test/")]
        assert served and all(entry.kind != "miss" for entry in served)
        seen.append((session.episode_number, fresh, session.container_id))
    (first_episode, first_fresh, first_id), (second_episode, second_fresh, second_id) = seen
    assert first_id == second_id, "one warm container serves both episodes"
    assert second_episode > first_episode and first_fresh and second_fresh, "each gets a fresh profile"
