"""`susbench injections validate|list|preview|anchor` and `susbench extension build`."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from susbench.catalog.injections import build_extension, load_injections, load_templates
from susbench.catalog.tasks import load_tasks
from susbench.catalog.tasksets import REALPAGES, TASK_SETS, build_realpages_snapshot
from susbench.cli.options import GenericInjectionsOption, InjectionsOption, JsonOption
from susbench.cli.realism import realism
from susbench.cli.terminal import output_console, shell_words
from susbench.core.errors import SusbenchError
from susbench.core.models import PATTERN_TYPES, SEMANTIC_KINDS, Injection, PatternType
from susbench.core.paths import INJECTIONS_DIR, cache_dir
from susbench.core.tables import FittedTable
from susbench.web.edition import DEFAULT_DATE

# Drafting, reviewing, previewing and measuring (Playwright, the replayer) are imported by the commands
# that do them: `--help` loads none of it.
if TYPE_CHECKING:
    from susbench.authoring.pipeline import DraftResult
    from susbench.preview.anchors import AnchorRow, PageSurvey

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


@injections_app.command("list", help="List injections; --json prints them as one JSON array.")
def list_injections(
    as_json: JsonOption = False,
) -> None:
    injections = load_injections()
    if as_json:
        listed = [
            {
                "id": item.id,
                "type": item.type,
                "site": item.site,
                "page": item.page.model_dump(mode="json", exclude_none=True),
            }
            for item in injections
        ]
        typer.echo(json.dumps(listed, indent=2))
        return
    rows = [[item.id, item.type, item.page.url.split("://", 1)[-1]] for item in injections]
    caption = f"{len(injections)} injections; --json for every field"
    output_console().print(FittedTable(("id", "type", "page"), rows, caption=caption))


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
    ] = DEFAULT_DATE.isoformat(),
    real_pages: Annotated[
        int,
        typer.Option(
            help="also every generic injection on the start pages of the first N realpages tasks "
            "(replayed from their snapshot, built from ../shared/realdata)"
        ),
    ] = 0,
    extra: InjectionsOption = None,
) -> None:
    from susbench.preview.injection_preview import preview_gallery

    injections = load_injections((INJECTIONS_DIR, *extra) if extra else ())
    unknown = sorted(set(only or ()) - {item.id for item in injections})
    if unknown:
        raise SusbenchError(f"--id {', '.join(unknown)}: no such injection (`susbench injections list`)")
    # with --injections and no --id: the folder's own injections (the catalog's are there to check ids)
    chosen = set(only) if only else {item.id for item in load_injections(tuple(extra))} if extra else None
    shown = [item for item in injections if chosen is None or item.id in chosen]
    gallery = preview_gallery(
        shown,
        injections,
        out or cache_dir() / "gallery",
        date,
        on_shot=lambda item: typer.echo(f"{item.type:20} {item.id}"),
    )
    typer.echo(str(gallery))
    if real_pages:
        _preview_real(shown, injections, out or cache_dir() / "gallery", real_pages)


def _preview_real(shown: list[Injection], injections: list[Injection], out: Path, count: int) -> None:
    from susbench.preview.injection_preview import preview_real_pages

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


def _pattern_types(text: str) -> tuple[PatternType, ...]:
    chosen = (
        PATTERN_TYPES if text == "all" else tuple(part.strip() for part in text.split(",") if part.strip())
    )
    unknown = [name for name in chosen if name not in PATTERN_TYPES]
    if unknown or not chosen:
        raise typer.BadParameter(
            f"{', '.join(unknown) or text!r}: expected 'all' or of {', '.join(PATTERN_TYPES)}"
        )
    return chosen  # type: ignore[return-value]


@injections_app.command(
    "draft", help="Draft injections on a recorded page with a language model (the paper's Fig. 2 pipeline)."
)
def draft(
    snapshot: Annotated[Path, typer.Argument(help="the recording (WACZ) the page is replayed from")],
    url: Annotated[str, typer.Option(help="the page to inject on, as recorded")],
    pattern_type: Annotated[
        str | None, typer.Option("--type", help="a pattern type, several joined by commas, or all")
    ] = None,
    model: Annotated[str | None, typer.Option(help="the model to ask")] = None,
    base_url: Annotated[
        str | None, typer.Option(help="any OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1")
    ] = None,
    by_hand: Annotated[
        list[Path] | None,
        typer.Option(
            "--by-hand", help="an injection written by hand (repeatable): checked and reviewed like a model's"
        ),
    ] = None,
    near: Annotated[
        str | None,
        typer.Option(help="the spot: a CSS selector or buy_button, price, title, ... (default: main)"),
    ] = None,
    describe: Annotated[
        Path | None,
        typer.Option(help="a filled-in description (default: injections/templates/<type>.describe.yaml)"),
    ] = None,
    out: Annotated[Path, typer.Option(help="the drafts folder")] = Path("drafts"),
    revise: Annotated[str | None, typer.Option(help="the reviewer's notes: revise the last draft")] = None,
    max_tokens: Annotated[
        int | None, typer.Option(min=1, help="a cap on each reply's tokens (default: the endpoint's)")
    ] = None,
    api_key_env: Annotated[
        str, typer.Option(help="environment variable holding the API key")
    ] = "OPENAI_API_KEY",
) -> None:
    from susbench.authoring.pipeline import DraftRequest, draft_by_hand
    from susbench.authoring.pipeline import draft as draft_injections

    if by_hand:
        if model or base_url or pattern_type or revise:
            raise typer.BadParameter(
                "--by-hand drafts need no --model, --base-url, --type or --revise", param_hint="--by-hand"
            )
        _show_drafts([draft_by_hand(snapshot, url, path, near, out, typer.echo) for path in by_hand], out)
        return
    if not (model and base_url and pattern_type):
        raise typer.BadParameter(
            "give --type, --model and --base-url (or --by-hand FILE)", param_hint="--model"
        )
    request = DraftRequest(
        snapshot=snapshot,
        url=url,
        types=_pattern_types(pattern_type),
        near=near,
        model=model,
        base_url=base_url,
        describe=describe,
        out=out,
        revise=revise,
        max_tokens=max_tokens,
    )
    results = draft_injections(request, os.environ.get(api_key_env, "none"), on_step=typer.echo)
    _show_drafts(results, out)


def _show_drafts(results: list[DraftResult], out: Path) -> None:
    source = results[0].source
    typer.echo(
        f"source simplified around {source.spot} ({source.found_by}): {source.before_bytes:,} -> "
        f"{source.after_bytes:,} bytes, about {source.before_tokens:,} -> {source.after_tokens:,} tokens"
    )
    for result in results:
        state = "ready to review" if not result.problems else f"{len(result.problems)} problem(s)"
        typer.echo(f"{result.type:20} round {result.round}  {state}  {result.folder}")
        for problem in result.problems:
            typer.echo(f"    - {problem}")
        look = result.check.look if result.check else None
        if look is not None:
            typer.echo(f"    nativeness score: {look.summary()}")
            for item in look.differences:
                typer.echo(f"    ~ {item}")
    typer.echo(f"review them with: susbench injections review {out}")


@injections_app.command(
    "review", help="One HTML page of every draft; --accept writes drafts into the catalog."
)
def review(
    drafts: Annotated[Path, typer.Argument(help="the drafts folder")],
    accept_drafts: Annotated[
        list[str] | None, typer.Option("--accept", help="a draft's folder name or id, or all (repeatable)")
    ] = None,
    reviewer: Annotated[str | None, typer.Option(help="who reviewed (written into the provenance)")] = None,
    into: Annotated[Path, typer.Option(help="the catalog folder to write into")] = INJECTIONS_DIR,
    despite_look: Annotated[
        bool,
        typer.Option(help="also accept drafts the nativeness score finds unlike the page (previews read)"),
    ] = False,
) -> None:
    from susbench.authoring.review import ACCEPTED, accept, draft_folders, find_draft, review_page

    page = review_page(drafts)
    typer.echo(f"{page}")
    if not accept_drafts:
        return
    if not reviewer:
        raise typer.BadParameter("--accept needs --reviewer NAME", param_hint="--reviewer")
    folders = (
        draft_folders(drafts)
        if accept_drafts == ["all"]
        else [find_draft(drafts, name) for name in accept_drafts]
    )
    for folder in folders:
        if (folder / ACCEPTED).is_file():
            continue
        typer.echo(f"accepted {folder.name} -> {accept(folder, reviewer, into, despite_look=despite_look)}")


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
    injections: GenericInjectionsOption = "all",
    as_json: JsonOption = False,
    screenshots: Annotated[
        Path | None,
        typer.Option(
            "--screenshots",
            help="a PNG of every placed stand-in, in this folder (where it lands, in the catalog's English"
            " and without the page's look; `injections realism --screenshots` shows what an episode draws)",
        ),
    ] = None,
) -> None:
    from susbench.preview.anchors import AnchorRow, generic_injections, measure

    chosen = generic_injections(injections)
    errors = Console(stderr=True)
    rows: list[AnchorRow] = []
    surveys: list[PageSurvey] = []
    for record in measure(pages, chosen, screenshots=screenshots):
        if isinstance(record, AnchorRow):
            rows.append(record)
            continue
        surveys.append(record)
        found = sum(rule is not None for rule in record.kinds.values())
        note = f"error: {record.error}" if record.error else f"{found}/{len(SEMANTIC_KINDS)} kinds found"
        errors.print(f"[dim]{record.page}[/] {note}", highlight=False, soft_wrap=True)
    if as_json:
        typer.echo(json.dumps([row.model_dump(mode="json") for row in rows], indent=2))
    else:
        console = Console()
        console.print(type_table(rows))
        console.print(kind_table(surveys))


def type_table(rows: list[AnchorRow]) -> Table:
    from susbench.preview.anchors import GOAL, summarize

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


injections_app.command(
    "realism", help="Score how native each drawn generic injection looks beside the page's own elements."
)(realism)
