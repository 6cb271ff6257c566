"""`susbench study`: one participant's whole session; `susbench study summary`: the realism summary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from susbench.catalog.tasks import complete_tasks
from susbench.cli.options import (
    DEFAULT_DB,
    DbOption,
    JsonOption,
    ServeHostOption,
    ServeOption,
    ServePortOption,
    SnapshotOption,
)
from susbench.cli.terminal import output_console

study_app = typer.Typer(invoke_without_command=True)


@study_app.callback()
def study(
    ctx: typer.Context,
    participant: Annotated[
        str | None, typer.Option(help="the participant's pseudonymous code (A-Z a-z 0-9 _ -, max 32)")
    ] = None,
    consent: Annotated[
        Path | None, typer.Option(help="text file shown for consent before anything runs")
    ] = None,
    tasks: Annotated[
        str,
        typer.Option(
            help="the study's tasks: ids, sites, pattern types or globs", autocompletion=complete_tasks
        ),
    ] = "all",
    practice: Annotated[
        str, typer.Option(help="practice task first, without a dark pattern: a task id, auto or none")
    ] = "auto",
    questionnaire: Annotated[
        Path | None,
        typer.Option(help="YAML of the questions after each task (default: study/questionnaire.yaml)"),
    ] = None,
    debrief: Annotated[
        Path | None, typer.Option(help="text file shown at the end (default: study/debrief.txt)")
    ] = None,
    break_every: Annotated[int, typer.Option(min=0, help="a break after every N tasks (0: none)")] = 0,
    seed: Annotated[
        int, typer.Option(help="seeds the base task order, the practice task and injections")
    ] = 0,
    snapshot: SnapshotOption = None,
    db: DbOption = DEFAULT_DB,
    episode_timeout: Annotated[
        float | None, typer.Option(min=1.0, help="seconds per task (default: the task's max_seconds)")
    ] = None,
    serve: ServeOption = False,
    port: ServePortOption = None,
    host: ServeHostOption = None,
) -> None:
    """Run one participant's session on $DISPLAY (with --serve, a remote seat): consent, practice,
    the tasks in counterbalanced order with a questionnaire after each, breaks, debrief. The same
    command resumes it."""
    if ctx.invoked_subcommand is not None:
        return
    from susbench.controller.stopping import stop_signal, stopping_on_signals
    from susbench.core.errors import SusbenchError
    from susbench.people.questionnaire import DEFAULT_QUESTIONNAIRE
    from susbench.people.remote import served_display
    from susbench.study.session import (
        DEFAULT_DEBRIEF,
        Study,
        StudyOptions,
        StudyResult,
        check_participant,
        session_line,
    )

    if participant is None or consent is None:
        raise SusbenchError(
            "susbench study needs --participant CODE and --consent FILE (see docs/people.md: Running a study)"
        )
    console = output_console()
    options = StudyOptions(
        participant=check_participant(participant),
        consent=consent,
        tasks=tasks,
        practice=None if practice == "none" else practice,
        questionnaire=questionnaire or DEFAULT_QUESTIONNAIRE,
        debrief=debrief or DEFAULT_DEBRIEF,
        break_every=break_every,
        seed=seed,
        snapshot=snapshot,
        db=db,
        episode_timeout_s=episode_timeout,
    )
    try:
        with stopping_on_signals(), served_display(serve, port, host, console):
            result = Study(options, say=lambda line: console.print(line, soft_wrap=True)).run()
    except KeyboardInterrupt as exc:
        result = StudyResult(participant=participant, state="not started", interrupted_by=stop_signal(exc))
    console.print(session_line(result, db), soft_wrap=True)
    if result.interrupted_by is not None:
        raise typer.Exit(128 + result.interrupted_by)


@study_app.command("summary")
def summary(
    db: DbOption = DEFAULT_DB,
    question: Annotated[str, typer.Option(help="the yes/no question that asks about noticing")] = "unusual",
    answer: Annotated[str, typer.Option(help="the answer that means noticed")] = "yes",
    as_json: JsonOption = False,
) -> None:
    """Realism: per injection type, the share of participants who noticed something unusual (Wilson 95%)."""
    from susbench.study.summary import realism_summary

    found = realism_summary(db, question, answer)
    if as_json:
        typer.echo(json.dumps(found.model_dump(mode="json"), indent=2))
        return
    table = Table(
        "pattern type",
        "met it",
        "noticed",
        "share",
        "95% Wilson",
        "answers (yes)",
        "never met it (said yes)",
        caption=f"participants who met a pattern: {found.participants}; noticed: answered {answer!r} to "
        f"{question!r} after a task where they met it (the extension decided it: avoided or not "
        "avoided); practice left out",
    )
    for row in found.types:
        shown = row.share is not None and row.low is not None and row.high is not None
        table.add_row(
            row.pattern_type,
            str(row.participants),
            str(row.noticed),
            f"{row.share:.0%}" if shown else "—",
            f"{row.low:.0%}–{row.high:.0%}" if shown else "—",
            f"{row.answers} ({row.yes_answers})",
            f"{row.unexposed} ({row.unexposed_yes})",
        )
    output_console().print(table)
