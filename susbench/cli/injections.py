"""`susbench injections validate|list|preview|anchor` and `susbench extension build`."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Annotated

import typer
from rich import box
from rich.console import Console
from rich.table import Table

from susbench.catalog.injections import build_extension, load_injections, load_templates
from susbench.catalog.tasks import load_tasks
from susbench.catalog.tasksets import REALPAGES, TASK_SETS, build_realpages_snapshot
from susbench.cli.terminal import output_console, shell_words
from susbench.core.models import PATTERN_TYPES, SEMANTIC_KINDS, Injection
from susbench.core.paths import cache_dir
from susbench.preview.anchors import GOAL, AnchorRow, PageSurvey, generic_injections, measure, summarize
from susbench.preview.injection_preview import PREVIEW_DATE, preview_gallery, preview_real_pages

injections_app = typer.Typer(no_args_is_help=True)
extension_app = typer.Typer(no_args_is_help=True)


@injections_app.command(
    "validate", help="Validate injection files (default: the whole catalog) and templates."
)
def validate(paths: Annotated[list[Path] | None, typer.Argument(help="files or folders")] = None) -> None:
    injections = load_injections(paths or ())
    load_templates()
    counts = Counter(item.type for item in injections)
    summary = ", ".join(f"{name} {counts[name]}" for name in PATTERN_TYPES if counts[name])
    typer.echo(f"{len(injections)} injections valid ({summary})")


@injections_app.command("list", help="List injections; --json prints one object per line.")
def list_injections(as_json: Annotated[bool, typer.Option("--json", help="JSON lines")] = False) -> None:
    injections = load_injections()
    if as_json:
        for item in injections:
            page = item.page.model_dump(mode="json", exclude_none=True)
            typer.echo(json.dumps({"id": item.id, "type": item.type, "site": item.site, "page": page}))
        return
    table = Table(
        box=box.SIMPLE_HEAD, pad_edge=False, caption=f"{len(injections)} injections; --json for every field"
    )
    table.add_column("id", no_wrap=True)
    table.add_column("type", no_wrap=True)
    table.add_column("page", overflow="fold")
    for item in injections:
        table.add_row(item.id, item.type, item.page.url.split("://", 1)[-1])
    output_console().print(table)


@extension_app.command("build", help="Build the MV3 extension with its injection store; says where.")
def build(
    out: Annotated[
        Path | None, typer.Option("--out", help="folder (default: content-addressed in the cache)")
    ] = None,
) -> None:
    injections = load_injections()
    folder = build_extension(injections, out).resolve()
    types = len({item.type for item in injections})
    typer.echo(f"built the extension with {len(injections)} injections of {types} pattern types in {folder}")
    flags = [f"--disable-extensions-except={folder}", f"--load-extension={folder}"]
    typer.echo(f"load it in Chromium with: {shell_words(flags)}")


@injections_app.command(
    "preview", help="Screenshot every injection in place on the local web; writes a gallery."
)
def preview(
    out: Annotated[
        Path | None, typer.Option("--out", help="gallery folder (default: <cache>/gallery)")
    ] = None,
    only: Annotated[list[str] | None, typer.Option("--id", help="only these injection ids")] = None,
    date: Annotated[
        str, typer.Option(help="local web date (sites redesign after their drift date)")
    ] = PREVIEW_DATE,
    real_pages: Annotated[
        int,
        typer.Option(
            help="also every generic injection on the start pages of the first N realpages tasks "
            "(replayed from their snapshot, built from ../shared/realdata)"
        ),
    ] = 0,
) -> None:
    injections = load_injections()
    shown = [item for item in injections if not only or item.id in only]
    if real_pages:
        _preview_real(shown, injections, out or cache_dir() / "gallery", real_pages)
        return
    gallery = preview_gallery(
        shown,
        injections,
        out or cache_dir() / "gallery",
        date,
        on_shot=lambda item: typer.echo(f"{item.type:20} {item.id}"),
    )
    typer.echo(str(gallery))


def _preview_real(shown: list[Injection], injections: list[Injection], out: Path, count: int) -> None:

    generic = [item for item in shown if item.site == "*"]
    tasks = load_tasks(TASK_SETS[REALPAGES].tasks_dir, {item.id: item for item in injections})
    urls = list(dict.fromkeys(task.start_url for task in tasks))[:count]
    galleries = preview_real_pages(
        generic,
        injections,
        build_realpages_snapshot(),
        urls,
        out,
        on_shot=lambda item: typer.echo(f"{item.type:20} {item.id}"),
    )
    typer.echo("\n".join(str(path) for path in galleries))


RULES = ("microdata", "json-ld", "role", "text", "vocabulary")


@injections_app.command(
    "anchor", help="Measure where generic injections land on real pages (saved HTML, WARC/WACZ, URLs)."
)
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
