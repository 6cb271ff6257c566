"""`susbench injections validate|list|preview` and `susbench extension build`."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Annotated

import typer
from rich import box
from rich.table import Table

from susbench.catalog.injections import build_extension, load_injections, load_templates
from susbench.catalog.tasks import load_tasks
from susbench.cli.terminal import output_console, shell_words
from susbench.core.models import PATTERN_TYPES, Injection
from susbench.core.paths import cache_dir
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
    from susbench.catalog.tasksets import REALPAGES, TASK_SETS, build_realpages_snapshot

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
