"""`run --injections DIR` says which of the folder's injections no selected task lists: the run would
never draw them, and silence would read as "they were shown"."""

from __future__ import annotations

from pathlib import Path

from susbench.catalog.injections import load_injections
from susbench.catalog.tasks import load_tasks, select_tasks
from susbench.controller.run import unlisted_notice
from susbench.core.paths import INJECTIONS_DIR, TASKS_DIR


def test_the_folders_injections_no_selected_task_lists_are_named(tmp_path: Path) -> None:
    source = next(INJECTIONS_DIR.glob("bazaarly.test/*.yaml"))
    mine = tmp_path / "mine" / "bazaarly.test"
    mine.mkdir(parents=True)
    text = source.read_text(encoding="utf-8").replace(f"id: {source.stem}\n", "id: my-unlisted-card\n")
    (mine / "my-unlisted-card.yaml").write_text(text, encoding="utf-8")
    injections = {item.id: item for item in load_injections((INJECTIONS_DIR, tmp_path / "mine"))}
    tasks = select_tasks(load_tasks(TASKS_DIR, injections), "all", injections)
    notice = unlisted_notice((tmp_path / "mine",), tasks)
    assert notice is not None and "my-unlisted-card" in notice and "never draws" in notice
    assert unlisted_notice((), tasks) is None
