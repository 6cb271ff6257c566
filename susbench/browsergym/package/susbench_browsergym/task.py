"""A SusBench task as a BrowserGym task: one episode of `susbench run` per reset.

`setup` hands over the controller's tab, already on the start page with the task's injection (the
episode was started when the env attached, `start`); the goal is the task's instruction and nothing
more. `validate` is the task's completion check (reward 1.0 once it holds) and ends the episode when
the task is complete or the agent has answered the user; its info names the episode and nothing
about the pattern. `teardown` ends the episode: the controller scores and stores it in DuckDB.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import playwright.sync_api
from browsergym.core.task import AbstractBrowserTask

from susbench_browsergym.episode import Episode, EpisodeSpec

AGENT_VARIABLE = "SUSBENCH_BROWSERGYM_AGENT"
DB_VARIABLE = "SUSBENCH_BROWSERGYM_DB"
DEFAULT_DB = "susbench-browsergym.duckdb"
# The episode's own chat, where BrowserGym's greeting is the first assistant message.
AGENT_ROLES = ("assistant", "infeasible")


class SusbenchTask(AbstractBrowserTask):
    """One SusBench task (`task_id`), replayed from its task set's snapshot (or `live`); the episode's
    time limit is the task's own unless `episode_timeout_s` says otherwise."""

    @classmethod
    def get_task_id(cls) -> str:
        return "susbench"

    def __init__(
        self,
        seed: int | None,
        task_id: str,
        task_set: str = "localweb",
        agent: str | None = None,
        db: str | None = None,
        snapshot: str | None = None,
        live: bool = False,
        episode_timeout_s: float | None = None,
    ) -> None:
        super().__init__(seed or 0)
        self.viewport = {"width": 1280, "height": 800}  # the snapshot's look; the launcher sets it
        self.slow_mo = 0
        self.timeout = 5000
        self.spec = EpisodeSpec(
            task_id=task_id,
            task_set=task_set,
            agent=agent or os.environ.get(AGENT_VARIABLE, "agent"),
            db=Path(db or os.environ.get(DB_VARIABLE, DEFAULT_DB)).absolute(),
            seed=seed or 0,
            snapshot=Path(snapshot) if snapshot else None,
            live=live,
            episode_timeout_s=episode_timeout_s,
        )
        self.episode: Episode | None = None
        self.env: Any = None
        self.done = False
        self.answer = ""

    def start(self, headless: bool) -> dict[str, Any]:
        """Start the episode (called when the env attaches to the browser); what the controller said."""
        self.spec.headless = headless
        self.episode = Episode.start(self.spec)
        return self.episode.ready

    def setup(self, page: playwright.sync_api.Page) -> tuple[str, dict[str, Any]]:
        episode = self._running()
        start_page = next(other for other in page.context.pages if other is not page)
        self.env.page = start_page
        self.env.page_history = {start_page: None}
        page.close()
        return episode.ready["instruction"], {"episode_id": episode.episode_id}

    def validate(
        self, page: playwright.sync_api.Page, chat_messages: list[dict[str, Any]]
    ) -> tuple[float, bool, str, dict[str, Any]]:
        episode = self._running()
        completed = bool(episode.ask("validate").get("completed"))
        spoken = [message for message in chat_messages if message["role"] in AGENT_ROLES][1:]
        self.answer = str(spoken[-1]["message"]) if spoken else ""
        self.done = completed or bool(spoken)
        return (1.0 if completed else 0.0), self.done, "", {"episode_id": episode.episode_id}

    def teardown(self) -> None:
        episode, self.episode = self.episode, None
        if episode is not None:
            episode.end(done=self.done, message=self.answer)

    def cheat(self, page: playwright.sync_api.Page, chat_messages: list[dict[str, Any]]) -> None:
        raise NotImplementedError("SusBench gives no solution to the subject; its scripted baselines have it")

    # The env's calls for marking, acting on the pattern, and the trace.

    def mark(self, page: playwright.sync_api.Page) -> None:
        """After BrowserGym's marking: the pattern's elements numbered on from its counter."""
        counter = page.evaluate("() => window.browsergym_elem_counter || 0")
        answer = self._running().ask("mark", url=page.url, next=counter)
        page._susbench_ids = frozenset(answer.get("ids", ()))  # type: ignore[attr-defined]
        if answer.get("next", counter) != counter:
            page.evaluate("(n) => { window.browsergym_elem_counter = n; }", answer["next"])

    def unmark(self, page: playwright.sync_api.Page) -> None:
        self._running().ask("unmark", url=page.url)

    def target(self, page: playwright.sync_api.Page, bid: str, scroll: bool) -> dict[str, Any]:
        return self._running().ask("target", url=page.url, id=bid, scroll=scroll)

    def record_step(self, step: dict[str, Any]) -> None:
        self._running().ask("step", **step)

    def _running(self) -> Episode:
        if self.episode is None:
            raise RuntimeError("no SusBench episode is running (reset the env first)")
        return self.episode
