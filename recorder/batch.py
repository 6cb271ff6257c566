"""Recording at scale: every site of a catalog into its own WACZ, resumably and politely.

A site whose snapshot was recorded and verifies is skipped. Each site is recorded in one fresh
browser session behind its own recording proxy (a per-host rate limit in the proxy), walking its
hand-written plan or crawling it (robots.txt respected unless ignored, a pause between pages), with
an honest User-Agent. Sites run in worker processes, `concurrency` at a time (mitmproxy allows one
proxy per process); each reports its progress through a queue to the caller's observer. A site's
snapshot is written beside the output folder's others only once it verifies, after its summary.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import platform
import queue
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Literal, Protocol

from playwright.sync_api import Error as PlaywrightError
from pydantic import Field, ValidationError

from susbench import __version__
from susbench.browser import chromium_version, find_chromium
from susbench.core.errors import SusbenchError
from susbench.core.models import Frozen, HostMap, PageLook, SiteCategory
from susbench.recorder.capture import RecordSetup, record_walks
from susbench.recorder.catalog import CatalogSite, CrawlSettings, Politeness, SiteCatalog
from susbench.recorder.crawl import Crawl, PolitePlan
from susbench.recorder.robots import PRODUCT_TOKEN
from susbench.replayer.check import check_snapshot
from susbench.snapshot import verify_snapshot

PARTIAL_DIR = ".partial"
POLL_S = 0.2


class RecordRun(Frozen):
    """What `record --catalog` was asked besides the catalog itself."""

    out_dir: Path
    host_map: HostMap = HostMap()
    upstream_ca: Path | None = None
    headless: bool = True
    keep_secrets: bool = False
    crawl: CrawlSettings | None = Field(default=None, description="replaces every crawled site's settings")
    ignore_robots: bool = False
    concurrency: int | None = Field(default=None, ge=1, le=32, description="None: the catalog's")
    check: bool = Field(default=False, description="replay each new snapshot and measure its coverage")


class ReplayCheck(Frozen):
    """A new snapshot replayed offline, page by page, counting the requests to its own hosts."""

    pages: int
    requests: int
    matched: int
    worst: float = Field(description="the lowest matched share of one page")
    errors: int = Field(description="pages that did not load")
    misses: tuple[str, ...] = ()

    @property
    def ratio(self) -> float:
        return self.matched / self.requests if self.requests else 1.0


class SiteSummary(Frozen):
    """One site's recording, written beside its snapshot as `<id>.json`."""

    site: str
    category: SiteCategory
    status: Literal["recorded", "skipped", "failed"]
    walk: Literal["plan", "crawl"]
    snapshot: str | None = Field(default=None, description="file name in the output folder")
    pages: int = 0
    requests: int = Field(default=0, description="requests the pages asked for")
    failures: int = Field(default=0, description="requests the pages asked for that got no answer")
    bytes: int = Field(default=0, description="response bytes of the pages' requests, as sent")
    other: int = Field(default=0, description="Chromium's own requests and robots.txt")
    product: str | None = None
    cart: str | None = None
    checkout: str | None = None
    blocked: tuple[str, ...] = Field(default=(), description="pages robots.txt kept the crawl out of")
    notes: tuple[str, ...] = ()
    replay: ReplayCheck | None = None
    seconds: float = 0.0
    error: str | None = None


class SiteEvent(Frozen):
    """Progress of one site: it started (with the pages it may take), opened a page, or ended."""

    site: str
    kind: Literal["start", "page", "done"]
    total: int = 0
    text: str = ""
    summary: SiteSummary | None = None


class RecordObserver(Protocol):
    def event(self, event: SiteEvent) -> None: ...


Emit = Callable[[SiteEvent], None]


def honest_user_agent(contact: str = "") -> str:
    """Chromium's own User-Agent (reduced form) followed by this project's token and version."""
    major = chromium_version(find_chromium()).split()[1].split(".")[0]
    system = (
        "X11; Linux x86_64"
        if platform.machine() in ("x86_64", "AMD64")
        else f"X11; Linux {platform.machine()}"
    )
    about = f"; +{contact}" if contact else ""
    return (
        f"Mozilla/5.0 ({system}) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{major}.0.0.0 Safari/537.36 "
        f"{PRODUCT_TOKEN}/{__version__} (research archive of consumer websites{about})"
    )


def snapshot_path(out_dir: Path, site: CatalogSite) -> Path:
    return out_dir / f"{site.id}.wacz"


def summary_path(out_dir: Path, site: CatalogSite) -> Path:
    return out_dir / f"{site.id}.json"


def recorded(out_dir: Path, site: CatalogSite) -> SiteSummary | None:
    """The site's summary when its snapshot was recorded and still verifies; else None (a damaged
    or truncated WACZ is recorded again)."""
    wacz, summary = snapshot_path(out_dir, site), summary_path(out_dir, site)
    if not (wacz.is_file() and summary.is_file()):
        return None
    try:
        done = SiteSummary.model_validate_json(summary.read_text(encoding="utf-8"))
    except (ValidationError, OSError, UnicodeDecodeError):
        return None
    if done.status != "recorded":
        return None
    try:
        return done if verify_snapshot(wacz).ok else None
    except SusbenchError:
        return None


def _write_summary(path: Path, summary: SiteSummary) -> None:
    part = path.with_name(f".{path.name}.part")
    part.write_text(json.dumps(summary.model_dump(mode="json"), indent=2) + "\n", encoding="utf-8")
    os.replace(part, path)


def _replay_check(path: Path) -> ReplayCheck:
    pages = check_snapshot(path, mode="direct")
    requests = sum(page.site.requests for page in pages)
    matched = sum(page.site.requests - page.site.miss - page.site.live for page in pages)
    return ReplayCheck(
        pages=len(pages),
        requests=requests,
        matched=matched,
        worst=min((page.site.matched_ratio for page in pages), default=1.0),
        errors=sum(page.error is not None for page in pages),
        misses=tuple(dict.fromkeys(url for page in pages for url in page.site.misses)),
    )


def record_site(site: CatalogSite, run: RecordRun, politeness: Politeness, emit: Emit) -> SiteSummary:
    """Record one site into `out_dir/<id>.wacz` (and `<id>.json`); failures end up in the summary."""
    started = time.monotonic()
    walk: Crawl | PolitePlan
    if site.plan is not None:
        walk = PolitePlan(site.plan, site.plan.id, politeness.page_delay_s, run.ignore_robots)
        total = len(site.plan.pages)
    else:
        settings = run.crawl or site.crawl or CrawlSettings()
        walk = Crawl(site.id, site.start_url, settings, politeness.page_delay_s, run.ignore_robots)
        total = settings.pages
    base = SiteSummary(
        site=site.id, category=site.category, status="failed", walk="plan" if site.plan else "crawl"
    )
    emit(SiteEvent(site=site.id, kind="start", total=total))
    partial = run.out_dir / PARTIAL_DIR / f"{site.id}.wacz"
    partial.parent.mkdir(parents=True, exist_ok=True)
    setup = RecordSetup(
        host_map=run.host_map,
        upstream_ca=run.upstream_ca,
        headless=run.headless,
        look=PageLook(locale=site.locale, timezone=site.timezone),
        keep_secrets=run.keep_secrets,
        rate=politeness.rate,
        burst=politeness.burst,
        user_agent=honest_user_agent(politeness.contact),
    )
    try:
        recording = record_walks(
            [walk],
            partial,
            setup,
            targets=(site.start_url,),
            progress=lambda text: emit(SiteEvent(site=site.id, kind="page", text=text)),
        )
        report = verify_snapshot(partial)
        if not report.ok:
            raise SusbenchError(f"{partial}: the new snapshot does not verify: {'; '.join(report.problems)}")
        asked = recording.page_requests()
        summary = base.model_copy(
            update={
                "status": "recorded",
                "snapshot": snapshot_path(run.out_dir, site).name,
                "pages": len(recording.pages),
                "requests": len(asked),
                "failures": sum(entry.status == 0 for entry in asked),
                "bytes": sum(entry.bytes for entry in asked),
                "other": len(recording.log) - len(asked),
            }
        )
        summary = summary.model_copy(
            update=walk.result.model_dump(include={"product", "cart", "checkout", "blocked", "notes"})
        )
        if run.check:
            summary = summary.model_copy(update={"replay": _replay_check(partial)})
    except (SusbenchError, PlaywrightError, OSError) as exc:
        partial.unlink(missing_ok=True)
        so_far = walk.result.model_dump(include={"blocked", "notes"})
        summary = base.model_copy(update={"error": str(exc).splitlines()[0], **so_far})
    summary = summary.model_copy(update={"seconds": round(time.monotonic() - started, 1)})
    _write_summary(summary_path(run.out_dir, site), summary)
    if summary.status == "recorded":
        os.replace(partial, snapshot_path(run.out_dir, site))
    emit(SiteEvent(site=site.id, kind="done", summary=summary))
    return summary


def _record_in_worker(
    site: CatalogSite, run: RecordRun, politeness: Politeness, events: queue.Queue[SiteEvent]
) -> SiteSummary:
    return record_site(site, run, politeness, events.put)


def record_catalog(
    catalog: SiteCatalog, sites: Sequence[CatalogSite], run: RecordRun, observer: RecordObserver
) -> list[SiteSummary]:
    """Every selected site not yet recorded, `concurrency` at a time; a summary per site, in order."""
    run.out_dir.mkdir(parents=True, exist_ok=True)
    politeness = catalog.politeness
    summaries: dict[str, SiteSummary] = {}
    todo: list[CatalogSite] = []
    for site in sites:
        done = recorded(run.out_dir, site)
        if done is None:
            todo.append(site)
            continue
        summaries[site.id] = done.model_copy(update={"status": "skipped"})
        observer.event(SiteEvent(site=site.id, kind="done", summary=summaries[site.id]))
    workers = min(run.concurrency or politeness.concurrency, len(todo))
    if workers <= 1:
        for site in todo:
            summaries[site.id] = record_site(site, run, politeness, observer.event)
    else:
        summaries.update(_record_in_processes(todo, run, politeness, workers, observer))
    return [summaries[site.id] for site in sites]


def _record_in_processes(
    sites: Sequence[CatalogSite],
    run: RecordRun,
    politeness: Politeness,
    workers: int,
    observer: RecordObserver,
) -> dict[str, SiteSummary]:
    context = multiprocessing.get_context("spawn")
    with context.Manager() as manager, ProcessPoolExecutor(workers, mp_context=context) as pool:
        events: queue.Queue[SiteEvent] = manager.Queue()
        futures: dict[str, Future[SiteSummary]] = {
            site.id: pool.submit(_record_in_worker, site, run, politeness, events) for site in sites
        }
        while True:
            try:
                observer.event(events.get(timeout=POLL_S))
            except queue.Empty:
                if all(future.done() for future in futures.values()):
                    break
        return {site: future.result() for site, future in futures.items()}
