"""The recorder's command: `susbench record` (snapshot commands live in `susbench.cli.snapshot`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from susbench.cli.terminal import ShownProgress
from susbench.core.errors import SusbenchError
from susbench.core.models import DEFAULT_LOCALE, DEFAULT_TIMEZONE, HostMap, PageLook, Viewport

# The recorder (mitmproxy, Playwright) is imported when a recording starts: `--help` loads none of it.
if TYPE_CHECKING:
    from susbench.recorder.batch import RecordRun, SiteEvent, SiteSummary

console = Console()
SUMMARY_WIDTH = 150  # a log's lines (not a terminal): room for the whole coverage table


def record(
    targets: Annotated[
        list[str] | None,
        typer.Argument(help="URLs, capture plan YAML files, task YAML files or task ids (tasks/<id>.yaml)"),
    ] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="snapshot to write (.wacz)")] = None,
    catalog: Annotated[
        Path | None, typer.Option("--catalog", help="a site catalog (sites/*.yaml): every site its own WACZ")
    ] = None,
    out_dir: Annotated[
        Path | None, typer.Option("--out-dir", help="with --catalog: folder of <site>.wacz and <site>.json")
    ] = None,
    sites: Annotated[
        str, typer.Option("--sites", help="with --catalog: all, site ids, categories or globs over ids")
    ] = "all",
    crawl: Annotated[
        str | None,
        typer.Option(
            "--crawl", help="with --catalog: crawl settings for every crawled site, e.g. depth=2,pages=20"
        ),
    ] = None,
    ignore_robots: Annotated[
        bool, typer.Option("--ignore-robots", help="with --catalog: open pages robots.txt disallows")
    ] = False,
    concurrency: Annotated[
        int | None,
        typer.Option(min=1, max=32, help="with --catalog: sites at once (default: the catalog's)"),
    ] = None,
    check: Annotated[
        bool, typer.Option("--check", help="with --catalog: replay each new snapshot and report its coverage")
    ] = False,
    resolve: Annotated[
        list[str] | None, typer.Option("--resolve", help="HOST[:PORT]=IP:PORT, in the proxy")
    ] = None,
    upstream_ca: Annotated[
        Path | None, typer.Option("--upstream-ca", help="CA (PEM) upstream TLS must chain to")
    ] = None,
    headless: Annotated[bool, typer.Option("--headless/--headed")] = True,
    timezone: Annotated[
        str, typer.Option(help="for targets (catalog sites have their own)")
    ] = DEFAULT_TIMEZONE,
    locale: Annotated[str, typer.Option(help="for targets (catalog sites have their own)")] = DEFAULT_LOCALE,
    width: Annotated[int, typer.Option("--width")] = 1280,
    height: Annotated[int, typer.Option("--height")] = 800,
    keep_secrets: Annotated[
        bool,
        typer.Option("--keep-secrets", help="write cookies, credentials and token parameters unmasked"),
    ] = False,
) -> None:
    """Record targets through mitmproxy in Chromium into one WACZ snapshot, or (--catalog) every
    site of a catalog into its own.

    Cookie values, credentials and token query parameters (recorder/secrets.yaml) are masked in
    the snapshot unless --keep-secrets is given.
    """
    from susbench.core.hostmap import parse_host_map
    from susbench.recorder.batch import RecordRun
    from susbench.recorder.catalog import CrawlSettings

    host_map = parse_host_map(resolve or [], "--resolve")
    target = out_dir if catalog else out
    if keep_secrets:
        console.print(
            f"[yellow]warning:[/] --keep-secrets: cookies, credentials and tokens go unmasked into {target}",
            highlight=False,
        )
    if catalog is not None:
        if targets or out is not None:
            raise SusbenchError("--catalog records the catalog's sites: give --out-dir, not targets or --out")
        if out_dir is None:
            raise SusbenchError("--catalog needs --out-dir: the folder each site's WACZ goes into")
        run = RecordRun(
            out_dir=out_dir,
            host_map=host_map,
            upstream_ca=upstream_ca,
            headless=headless,
            keep_secrets=keep_secrets,
            crawl=CrawlSettings.parse(crawl) if crawl is not None else None,
            ignore_robots=ignore_robots,
            concurrency=concurrency,
            check=check,
        )
        _record_catalog(catalog, sites, run)
        return
    given = [
        flag
        for flag, value in (("--out-dir", out_dir), ("--crawl", crawl), ("--concurrency", concurrency))
        if value is not None
    ] + [flag for flag, on in (("--ignore-robots", ignore_robots), ("--check", check)) if on]
    if given or sites != "all":
        raise SusbenchError(f"{', '.join(given or ['--sites'])}: only with --catalog")
    if not targets or out is None:
        raise SusbenchError("give targets and --out (one snapshot), or --catalog FILE --out-dir DIR")
    _record_targets(
        targets,
        out,
        host_map,
        upstream_ca,
        headless,
        PageLook(viewport=Viewport(width=width, height=height), locale=locale, timezone=timezone),
        keep_secrets,
    )


def _record_targets(
    targets: list[str],
    out: Path,
    host_map: HostMap,
    upstream_ca: Path | None,
    headless: bool,
    look: PageLook,
    keep_secrets: bool,
) -> None:
    from susbench.catalog.tasks import task_target
    from susbench.recorder.capture import load_target, record_plans

    plans = [load_target(task_target(target)) for target in targets]
    total = sum(len(plan.pages) for plan in plans)
    with Progress(
        TextColumn("[bold]recording"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=console,
    ) as bar:
        task = bar.add_task("", total=total)
        done = [0]

        def advance(url: str) -> None:
            bar.update(task, completed=done[0], description=url)
            done[0] += 1

        path = record_plans(
            plans,
            out,
            host_map=host_map,
            upstream_ca=upstream_ca,
            headless=headless,
            timezone=look.timezone,
            locale=look.locale,
            viewport=look.viewport,
            targets=targets,
            progress=advance,
            keep_secrets=keep_secrets,
        )
        bar.update(task, completed=total, description="written")
    console.print(f"wrote {path}")


class CatalogProgress(ShownProgress):
    """A progress bar per site; in a log (not a terminal) one line per site when it ends."""

    def __init__(self, sites: list[str]) -> None:
        super().__init__(
            Progress(
                TextColumn("[bold]{task.fields[site]}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.description}", markup=False),
                TimeElapsedColumn(),
                console=console,
            )
        )
        width = max(map(len, sites), default=4)
        self._bars = {
            site: self._progress.add_task("waiting", total=None, site=site.ljust(width)) for site in sites
        }

    def event(self, event: SiteEvent) -> None:
        self._show()
        bar = self._bars[event.site]
        if event.kind == "start":
            self._progress.update(bar, total=event.total, completed=0, description="starting")
        elif event.kind == "page":
            self._progress.update(bar, advance=1, description=event.text[:70])
        elif event.summary is not None:
            summary = event.summary
            total = self._progress.tasks[bar].total or 1
            text = summary.status + (f": {summary.error}" if summary.error else "")
            self._progress.update(bar, total=total, completed=total, description=text[:70])
            if not console.is_terminal:
                console.print(f"{event.site}: {text}", highlight=False, markup=False, soft_wrap=True)


def _size(count: int) -> str:
    value = float(count)
    for unit in ("B", "kB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{count} B"


def summary_table(summaries: list[SiteSummary]) -> Table:
    table = Table(title="coverage per site")
    columns = (
        "site",
        "category",
        "walk",
        "status",
        "pages",
        "requests",
        "failures",
        "bytes",
        "product",
        "cart",
        "checkout",
        "replay",
        "seconds",
    )
    for column in columns:
        table.add_column(
            column, justify="left" if column in ("site", "category", "walk", "status") else "right"
        )
    for item in summaries:
        replay = item.replay
        table.add_row(
            item.site,
            item.category,
            item.walk,
            item.status,
            str(item.pages),
            str(item.requests),
            str(item.failures),
            _size(item.bytes),
            *("yes" if url else "-" for url in (item.product, item.cart, item.checkout)),
            f"{replay.ratio:.1%} (min {replay.worst:.1%})" if replay else "-",
            f"{item.seconds:.0f}",
        )
    return table


def _record_catalog(path: Path, selector: str, run: RecordRun) -> None:
    from susbench.recorder.batch import record_catalog
    from susbench.recorder.catalog import load_site_catalog

    catalog = load_site_catalog(path)
    chosen = catalog.select(selector)
    with CatalogProgress([site.id for site in chosen]) as progress:
        summaries = record_catalog(catalog, chosen, run, progress)
    table_console = console if console.is_terminal else Console(width=SUMMARY_WIDTH)
    table_console.print(summary_table(summaries))
    for item in summaries:
        for line in (*item.notes, *(f"robots.txt: not opened: {url}" for url in item.blocked)):
            console.print(f"  {item.site}: {line}", highlight=False, markup=False, soft_wrap=True)
        if item.replay and item.replay.misses:
            console.print(
                f"  {item.site}: replay misses: {', '.join(item.replay.misses)}",
                highlight=False,
                markup=False,
                soft_wrap=True,
            )
        if item.error:
            console.print(f"[red]{item.site}: {item.error}[/]", highlight=False, soft_wrap=True)
    failed = [item.site for item in summaries if item.status == "failed"]
    console.print(f"snapshots and summaries in {run.out_dir}")
    if failed:
        raise SusbenchError(f"{len(failed)} site(s) failed: {', '.join(failed)}")
