"""`susbench tasks draft`: tasks proposed for a recording's pages, checked, written for review."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from susbench.cli.options import InjectionsOption

if TYPE_CHECKING:  # the drafting (Chromium, the replayer) is imported when it runs
    from susbench.authoring.tasks import TaskDraft

tasks_app = typer.Typer(no_args_is_help=True)


def _said(draft: TaskDraft) -> None:
    if draft.task is not None:
        typer.echo(f"proposed {draft.task.id}: {draft.task.instruction!r} -> {draft.file}")
    else:
        typer.echo(f"skipped  {draft.page}: {'; '.join(draft.problems)}")


@tasks_app.command("draft", help="Propose a checked task for each suitable page of a recording; writes YAML.")
def draft(
    snapshot: Annotated[Path, typer.Argument(help="the recording (WACZ)")],
    pages: Annotated[int, typer.Option(min=1, help="how many tasks to propose")] = 3,
    out: Annotated[Path, typer.Option(help="the folder the task files go into")] = Path("drafted-tasks"),
    injections: InjectionsOption = None,
    model: Annotated[str | None, typer.Option(help="word the instructions with this model")] = None,
    base_url: Annotated[str | None, typer.Option(help="the model's OpenAI-compatible endpoint")] = None,
    api_key_env: Annotated[
        str, typer.Option(help="environment variable holding the API key")
    ] = "OPENAI_API_KEY",
) -> None:
    if (model is None) != (base_url is None):
        raise typer.BadParameter("give --model and --base-url together", param_hint="--model")
    from susbench.authoring.tasks import draft_tasks

    typer.echo(f"looking at the pages of {snapshot} in Chromium, offline")
    drafts = draft_tasks(
        snapshot,
        out,
        pages=pages,
        extra_injections=tuple(injections or ()),
        model=model,
        base_url=base_url,
        api_key=os.environ.get(api_key_env, "none"),
        on_page=_said,
    )
    proposed = sum(item.task is not None for item in drafts)
    typer.echo(
        f"{proposed} task(s) proposed in {out}; run them with: "
        f"susbench run --task-set {out} --snapshot {snapshot}"
    )
