"""`susbench injections realism`: does each drawn pattern take the page's own look?"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from susbench.cli.options import GenericInjectionsOption, JsonOption
from susbench.core.errors import InputError
from susbench.preview.halves import Half, half_pages

if TYPE_CHECKING:  # the measurement (Playwright, the replayer) is imported when it runs
    from susbench.preview.realism import RealismRow

GOAL = 0.9


def realism(
    pages: Annotated[
        list[str] | None,
        typer.Argument(
            help="saved pages (.html, .html.gz), folders of them, or WARC/WACZ files (--half: its pages)",
            metavar="PAGE_OR_SNAPSHOT",
            show_default=False,
        ),
    ] = None,
    injections: GenericInjectionsOption = "all",
    as_json: JsonOption = False,
    screenshots: Annotated[
        Path | None,
        typer.Option(
            "--screenshots", help="a PNG of every drawn pattern as an episode shows it, in this folder"
        ),
    ] = None,
    half: Annotated[
        Half | None,
        typer.Option(
            "--half",
            help="only the styled pages of this half of susbench/preview/realism_halves.yaml "
            "(tune on `tuning`, judge on `held-out`); without pages, every page of it",
        ),
    ] = None,
) -> None:
    from susbench.preview.anchors import generic_injections
    from susbench.preview.realism import measure_realism

    only: set[str] | None = None
    if half is not None:
        sources, only = half_pages(half)
        pages = pages or sources
    if not pages:
        raise InputError("name the pages to measure (PAGE_OR_SNAPSHOT...), or a half with --half")
    rows: list[RealismRow] = []
    progress = Console(stderr=True)
    for row in measure_realism(pages, generic_injections(injections), screenshots=screenshots, only=only):
        rows.append(row)
        verdict = "native" if row.native else f"not native ({'; '.join(row.faults())})"
        pictured = f"; not pictured: {row.not_pictured}" if row.not_pictured else ""
        progress.print(
            f"{len(rows)}: {row.injection} on {row.page}: {verdict}{pictured}", soft_wrap=True, markup=False
        )
    if as_json:
        typer.echo(
            json.dumps(
                [
                    row.model_dump(mode="json") | {"faults": row.faults(), "placed": row.placed()}
                    for row in rows
                ],
                indent=2,
            )
        )
        return
    console = Console()
    console.print(type_table(rows))
    for row in rows:
        faults = row.faults(detail=True) + ([f"not pictured: {row.not_pictured}"] if row.not_pictured else [])
        if faults:
            line = f"{row.type} {row.injection} on {row.page}: {'; '.join(faults)}"
            console.print(line, soft_wrap=True, markup=False)


def named_faults(rows: list[RealismRow]) -> str:
    """Each fault the rows show, with how many pairs show it, most common first."""
    counts: Counter[str] = Counter(fault for row in rows for fault in dict.fromkeys(row.faults()))
    return ", ".join(f"{fault} ×{count}" for fault, count in counts.most_common()) or "-"


def type_table(rows: list[RealismRow]) -> Table:
    table = Table(
        "type",
        "pairs",
        "no place",
        "native (of the pairs placed)",
        "faults (pairs showing each)",
        title=f"native per pattern type (goal ≥ {GOAL:.0%} of the pairs placed; no place: the page has "
        "no anchor for the injection, so nothing is drawn)",
        caption="each pair's faults are listed below the table"
        if any(row.faults() for row in rows)
        else None,
    )
    by_type: dict[str, list[RealismRow]] = defaultdict(list)
    for row in rows:
        by_type[row.type].append(row)
    for pattern_type, group in sorted(by_type.items()):
        native = sum(row.native for row in group)
        placed = sum(row.placed() for row in group)
        mark = "[green]met[/]" if placed and native >= GOAL * placed else "[red]missed[/]"
        share = f"{native} of {placed} ({100 * native / placed:.0f}%)" if placed else "none placed"
        table.add_row(
            pattern_type,
            str(len(group)),
            str(len(group) - placed),
            f"{share} {mark}",
            escape(named_faults(group)),
        )
    return table
