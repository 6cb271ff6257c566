"""`susbench injections anchor`: where generic injections land on real pages, and whether they fit."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from susbench.core.models import SEMANTIC_KINDS
from susbench.preview.anchors import GOAL, AnchorRow, PageSurvey, generic_injections, measure, summarize

RULES = ("microdata", "json-ld", "role", "text", "vocabulary")


def anchor(
    pages: Annotated[
        list[str],
        typer.Argument(
            help="saved pages (.html, .html.gz), folders of them, WARC/WACZ files, or URLs",
            metavar="PAGE_OR_DIR",
        ),
    ],
    injections: Annotated[
        str,
        typer.Option("--injections", help="generic injections: all, ids, types or id globs, comma-separated"),
    ] = "all",
    as_json: Annotated[bool, typer.Option("--json", help="one JSON object per page and injection")] = False,
    screenshots: Annotated[
        Path | None, typer.Option("--screenshots", help="a PNG of every placed injection, in this folder")
    ] = None,
) -> None:
    chosen = generic_injections(injections)
    errors = Console(stderr=True)
    rows: list[AnchorRow] = []
    surveys: list[PageSurvey] = []
    for record in measure(pages, chosen, screenshots=screenshots):
        if isinstance(record, AnchorRow):
            rows.append(record)
            if as_json:
                typer.echo(record.model_dump_json())
            continue
        surveys.append(record)
        found = sum(rule is not None for rule in record.kinds.values())
        note = f"error: {record.error}" if record.error else f"{found}/{len(SEMANTIC_KINDS)} kinds found"
        errors.print(f"[dim]{record.page}[/] {note}", highlight=False, soft_wrap=True)
    if not as_json:
        console = Console()
        console.print(type_table(rows))
        console.print(kind_table(surveys))


def type_table(rows: list[AnchorRow]) -> Table:
    title = f"per pattern type (goal ≥ {GOAL:.0%})"
    table = Table("type", "pairs", "anchored", "visible", "no control overlapped", title=title)
    for summary in summarize(rows):
        share = lambda count, total=summary.pairs: f"{100 * count / total:.1f}%"  # noqa: E731
        mark = "[green]met[/]" if summary.met else "[red]missed[/]"
        table.add_row(
            summary.type,
            str(summary.pairs),
            share(summary.anchored),
            share(summary.visible),
            f"{share(summary.clean)} {mark}",
        )
    return table


def kind_table(surveys: list[PageSurvey]) -> Table:
    table = Table("kind", "found", *RULES, title="which rule found each kind of element")
    for kind in SEMANTIC_KINDS:
        used = Counter(survey.kinds.get(kind) for survey in surveys)  # type: ignore[call-overload]
        found = f"{len(surveys) - used[None]}/{len(surveys)}"
        table.add_row(kind, found, *(str(used[rule]) for rule in RULES))
    return table
