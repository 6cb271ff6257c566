"""`susbench injections realism`: does each drawn pattern take the page's own look?"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from susbench.cli.options import GenericInjectionsOption, JsonOption

if TYPE_CHECKING:  # the measurement (Playwright, the replayer) is imported when it runs
    from susbench.preview.realism import RealismRow

GOAL = 0.9


def realism(
    pages: Annotated[
        list[str],
        typer.Argument(
            help="saved pages (.html, .html.gz), folders of them, or WARC/WACZ files",
            metavar="PAGE_OR_SNAPSHOT",
        ),
    ],
    injections: GenericInjectionsOption = "all",
    as_json: JsonOption = False,
    screenshots: Annotated[
        Path | None,
        typer.Option(
            "--screenshots", help="a PNG of every drawn pattern as an episode shows it, in this folder"
        ),
    ] = None,
) -> None:
    from susbench.preview.anchors import generic_injections
    from susbench.preview.realism import measure_realism

    rows: list[RealismRow] = []
    progress = Console(stderr=True)
    for row in measure_realism(pages, generic_injections(injections), screenshots=screenshots):
        rows.append(row)
        verdict = "native" if row.native else "not native"
        progress.print(f"{len(rows)}: {row.injection} on {row.page}: {verdict}", soft_wrap=True)
    if as_json:
        typer.echo(json.dumps([row.model_dump(mode="json") for row in rows], indent=2))
        return
    console = Console()
    console.print(type_table(rows))
    for row in rows:
        for reason in row.reasons:
            console.print(f"{row.type} {row.injection} on {row.page}: {reason}", soft_wrap=True, markup=False)


def type_table(rows: list[RealismRow]) -> Table:
    table = Table(
        "type",
        "pairs",
        "native",
        "worst attribute",
        "named faults",
        title=f"native per pattern type (goal ≥ {GOAL:.0%})",
        caption="each named fault is listed below the table" if any(row.reasons for row in rows) else None,
    )
    by_type: dict[str, list[RealismRow]] = defaultdict(list)
    for row in rows:
        by_type[row.type].append(row)
    for pattern_type, group in sorted(by_type.items()):
        native = sum(row.native for row in group)
        misses: dict[str, int] = defaultdict(int)
        for row in group:
            for element in row.elements:
                for name, value in element.distances.items():
                    if not element.matches and value > 0:
                        misses[name] += 1
        worst = max(misses, key=misses.__getitem__) if misses else "-"
        mark = "[green]met[/]" if native >= GOAL * len(group) else "[red]missed[/]"
        faulted = sum(bool(row.reasons) for row in group)
        table.add_row(
            pattern_type, str(len(group)), f"{100 * native / len(group):.0f}% {mark}", worst, str(faulted)
        )
    return table
