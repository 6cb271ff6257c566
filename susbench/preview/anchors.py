"""Do generic injections find their place on real pages? The measurement behind `injections anchor`.

Each page is opened offline in Chromium: saved HTML is answered at its original URL by a route
(every other request is aborted and every host name resolves nowhere), WARC/WACZ pages come from
the project's replayer, URLs are opened as they are. Into an isolated world of the page (a content
script's world: the page sees none of it) go `extension/semantic.js` and `anchor_probe.js`; the
probe puts a stand-in of each generic injection (its real template and texts) where the semantic
anchors say, scrolls to it and hit-tests it. A row says whether it anchored (and by which rule),
whether it is visible, how many page controls it covers or displaces, and how far the found price is
from the true one when `ground-truth.json` gives it.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext, suppress
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote, urlsplit

from playwright.sync_api import Browser, Page, Playwright, Route
from playwright.sync_api import Error as PlaywrightError
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from susbench.browser import BrowserProfile, fresh_context, launch_browser, playwright_driver, replay_profile
from susbench.browser.semantic import (
    IsolatedWorld,
    ProbeError,
    SemanticVocabulary,
    load_vocabulary,
    semantic_source,
)
from susbench.catalog.injections import GENERIC_DIR, Template, load_injections, load_templates
from susbench.catalog.tasks import select_matching
from susbench.core.errors import InputError, SusbenchError
from susbench.core.loading import describe_validation_error
from susbench.core.models import PATTERN_TYPES, Frozen, Injection, PatternType, SemanticKind
from susbench.core.urlpattern import glob_matches
from susbench.replayer.check import page_urls
from susbench.replayer.factory import replay_server
from susbench.replayer.service import ReplayService

PROBE_JS = Path(__file__).with_name("anchor_probe.js")
GROUND_TRUTH = "ground-truth.json"
SAVED_SUFFIXES = (".html", ".htm", ".html.gz", ".htm.gz")
ARCHIVE_SUFFIXES = (".warc", ".warc.gz", ".wacz")
SAVED_HOST = "saved-page.invalid"  # for saved HTML that names no URL of its own (reserved TLD)
LOAD_SETTLE_MS = 5000
GOAL = 0.95


class Truth(BaseModel):
    """One entry of a `ground-truth.json` beside saved pages (scrapinghub's product benchmark format)."""

    model_config = ConfigDict(frozen=True, extra="ignore")
    url: str
    price: tuple[str, ...] = ()


class PageRef(Frozen):
    """One page to measure and where Chromium opens it."""

    label: str = Field(description="how the report names the page: file name or URL")
    url: str
    shop: str = Field(description="host name of the page's original URL")
    html: Path | None = Field(default=None, description="saved HTML answered at `url`; None: network/replay")
    prices: tuple[str, ...] = Field(default=(), description="true price(s) from ground-truth.json")


class PageSurvey(Frozen):
    """Which rule found each kind of element on one page, and how far the found price is from the true one."""

    page: str
    shop: str
    kinds: dict[SemanticKind, str | None] = Field(description="kind -> rule that found it, or None")
    elements: dict[SemanticKind, str] = Field(default_factory=dict, description="kind -> the element found")
    truth_found: bool = Field(description="an element showing the true price is visible")
    price_distance: int | None = Field(description="px from the found price to the nearest true one")
    layer: str | None = Field(
        default=None, description="the page's consent wall, modal or banner, put away before measuring"
    )
    error: str | None = None


class AnchorRow(Frozen):
    """One page and one generic injection: the line `--json` prints."""

    page: str
    shop: str
    injection: str
    type: PatternType
    anchored: bool
    anchor_kind: SemanticKind | None = None
    rule: str | None = Field(default=None, description="microdata, json-ld, role, text or vocabulary")
    anchor: str | None = Field(default=None, description="the page element it hangs off")
    slot: str | None = Field(default=None, description="where it went: beside which element, or which corner")
    visible: bool = False
    overlaps: int = Field(default=0, description="page controls covered or pushed out of view")
    covered: tuple[str, ...] = ()
    displaced: tuple[str, ...] = ()
    distance_px: int | None = Field(default=None, description="anchor to the true price (price anchors)")
    screenshot: str | None = None
    error: str | None = None

    @property
    def clean(self) -> bool:
        """The goal's test: anchored, visible, and no page control overlapped."""
        return self.anchored and self.visible and self.overlaps == 0 and self.error is None


class PageSource(Protocol):
    """Where pages come from and how Chromium reaches them (and nothing else)."""

    pages: list[PageRef]

    def profile(self) -> BrowserProfile: ...

    def prepare(self, page: Page, ref: PageRef) -> None: ...


class SavedPages:
    """Saved HTML answered at its original URL; every other request aborted, every host unresolvable."""

    def __init__(self, pages: list[PageRef]) -> None:
        self.pages = pages

    def profile(self) -> BrowserProfile:
        return BrowserProfile(host_resolver_rules="MAP * ~NOTFOUND")

    def prepare(self, page: Page, ref: PageRef) -> None:
        assert ref.html is not None
        body = read_html(ref.html)
        document = ref.url.split("#", 1)[0]

        def answer(route: Route) -> None:
            request = route.request
            if request.is_navigation_request() and request.url.split("#", 1)[0] == document:
                route.fulfill(status=200, body=body, headers={"content-type": "text/html; charset=utf-8"})
            else:
                route.abort("blockedbyclient")

        page.route("**/*", answer)


class ArchivePages:
    """The HTML pages of a WARC/WACZ, served by the offline replayer (direct mode)."""

    def __init__(self, server: ReplayService, path: Path) -> None:
        self._server = server
        self.pages = [
            PageRef(label=f"{path.name}:{url}", url=url, shop=urlsplit(url).hostname or "")
            for url, _session in page_urls(server.snapshot)
        ]

    def profile(self) -> BrowserProfile:
        return replay_profile(self._server)

    def prepare(self, page: Page, ref: PageRef) -> None:
        self._server.new_episode()


class LivePages:
    """URLs opened as they are (the live web, or a server the caller runs)."""

    def __init__(self, urls: Sequence[str]) -> None:
        self.pages = [PageRef(label=url, url=url, shop=urlsplit(url).hostname or "") for url in urls]

    def profile(self) -> BrowserProfile:
        return BrowserProfile()

    def prepare(self, page: Page, ref: PageRef) -> None:
        return None


def read_html(path: Path) -> bytes:
    data = path.read_bytes()
    if path.name.endswith(".gz"):
        try:
            return gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise InputError(f"{path}: not a readable gzip file ({exc})") from None
    return data


def saved_stem(path: Path) -> str:
    name = path.name
    for suffix in SAVED_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def load_truth(folder: Path) -> dict[str, Truth]:
    """`ground-truth.json` of a folder of saved pages, keyed by file stem (empty when absent)."""
    path = folder / GROUND_TRUTH
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: line {exc.lineno}: invalid JSON: {exc.msg}") from None
    if not isinstance(data, dict):
        raise InputError(
            f"{path}: expected an object of page name -> {{url, price}}, got {type(data).__name__}"
        )
    truths = {}
    for stem, entry in data.items():
        try:
            truths[stem] = Truth.model_validate(entry)
        except ValidationError as exc:
            raise InputError(describe_validation_error(f"{path}: page {stem!r}", exc)) from None
    return truths


def own_url(html: bytes) -> str | None:
    """The URL a saved page names for itself (canonical link or og:url), if any."""
    head = html[:400_000].decode("utf-8", "replace")
    for pattern in (
        r"<link[^>]+rel=[\"']canonical[\"'][^>]*href=[\"']([^\"']+)",
        r"<meta[^>]+property=[\"']og:url[\"'][^>]*content=[\"']([^\"']+)",
    ):
        match = re.search(pattern, head, re.IGNORECASE)
        if match and match.group(1).startswith(("http://", "https://")):
            return match.group(1)
    return None


def saved_page(path: Path, truths: dict[str, Truth]) -> PageRef:
    truth = truths.get(saved_stem(path))
    url = truth.url if truth else own_url(read_html(path)) or f"http://{SAVED_HOST}/{quote(path.name)}"
    prices = tuple(price.strip() for price in truth.price) if truth else ()
    return PageRef(label=path.name, url=url, shop=urlsplit(url).hostname or "", html=path, prices=prices)


def is_saved(path: Path) -> bool:
    return path.name.lower().endswith(SAVED_SUFFIXES)


def is_archive(path: Path) -> bool:
    return path.name.lower().endswith(ARCHIVE_SUFFIXES)


def expand(targets: Sequence[str]) -> tuple[list[Path], list[Path], list[str]]:
    """Split arguments into saved HTML files, archives and URLs; folders give the pages they hold."""
    saved: list[Path] = []
    archives: list[Path] = []
    urls: list[str] = []
    for target in targets:
        if re.match(r"^https?://", target):
            urls.append(target)
            continue
        path = Path(target)
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.is_file() and (is_saved(p) or is_archive(p)))
            if not found:
                raise SusbenchError(
                    f"{path}: no pages there; expected .html, .html.gz, .warc(.gz) or .wacz files"
                )
            saved += [p for p in found if is_saved(p)]
            archives += [p for p in found if is_archive(p)]
        elif not path.exists():
            raise SusbenchError(f"{target}: no such file or folder (nor an http(s) URL)")
        elif is_saved(path):
            saved.append(path)
        elif is_archive(path):
            archives.append(path)
        else:
            raise SusbenchError(
                f"{path}: not a page; expected .html, .html.gz, .warc, .warc.gz, .wacz, a folder or a URL"
            )
    return saved, archives, urls


def select_injections(injections: Sequence[Injection], selector: str) -> list[Injection]:
    """`all`, ids, pattern types or globs over ids, comma-separated."""
    example = injections[0].id if injections else "generic-price-protection-plan"
    return select_matching(
        injections,
        selector,
        lambda part: [
            item for item in injections if part == "all" or item.type == part or glob_matches(part, item.id)
        ],
        lambda part: (
            f"--injections {part!r} matches no generic injection; expected 'all', an id (e.g. {example}), "
            f"a pattern type ({', '.join(PATTERN_TYPES)}) or a glob over ids"
        ),
    )


def generic_injections(selector: str = "all") -> list[Injection]:
    return select_injections(load_injections([GENERIC_DIR]), selector)


def probe_source(vocabulary: SemanticVocabulary) -> str:
    return semantic_source(vocabulary, PROBE_JS, "var probe = anchorProbe(WORDS);")


def screenshot_name(ref: PageRef, injection: Injection) -> str:
    """A readable name (host, the page's last path segment) and a digest of the whole page label, so
    two pages that end alike (pretix's `.../checkout/addons/` of two events, two `?s=` searches) keep
    their own pictures."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", saved_stem(Path(urlsplit(ref.label).path or ref.label)))[:40]
    digest = hashlib.sha256(ref.label.encode("utf-8")).hexdigest()[:8]
    return f"{ref.shop or 'page'}-{stem}-{digest}--{injection.id}.png"


class Measurement:
    """Runs the probe over pages and injections; yields a survey per page and a row per injection."""

    def __init__(
        self,
        injections: Sequence[Injection],
        templates: dict[str, Template] | None = None,
        vocabulary: SemanticVocabulary | None = None,
        screenshots: Path | None = None,
        timeout_s: float = 30.0,
    ) -> None:
        self.injections = list(injections)
        self.templates = templates or load_templates()
        self.source = probe_source(vocabulary or load_vocabulary())
        self.screenshots = screenshots
        self.timeout_s = timeout_s
        if screenshots is not None:
            screenshots.mkdir(parents=True, exist_ok=True)

    def run(self, browser: Browser, source: PageSource) -> Iterator[PageSurvey | AnchorRow]:
        profile = source.profile()
        for ref in source.pages:
            context = fresh_context(browser, profile)
            try:
                page = context.new_page()
                source.prepare(page, ref)
                yield from self.measure_page(page, ref)
            finally:
                context.close()

    def measure_page(self, page: Page, ref: PageRef) -> Iterator[PageSurvey | AnchorRow]:
        try:
            page.goto(ref.url, wait_until="domcontentloaded", timeout=self.timeout_s * 1000)
            with suppress(PlaywrightError):
                page.wait_for_load_state("load", timeout=LOAD_SETTLE_MS)
            world = IsolatedWorld(page, "susbench-anchors")
            world.evaluate(self.source)
            cleared = world.call("probe.clearLayers")
            survey = world.call("probe.survey", list(ref.prices))
        except (PlaywrightError, ProbeError) as exc:
            error = str(exc).splitlines()[0]
            yield PageSurvey(
                page=ref.label, shop=ref.shop, kinds={}, truth_found=False, price_distance=None, error=error
            )
            for injection in self.injections:
                yield self.row(ref, injection, {"anchored": False}, error=error)
            return
        yield PageSurvey(
            page=ref.label,
            shop=ref.shop,
            kinds={kind: hit["rule"] if hit else None for kind, hit in survey["kinds"].items()},
            elements={kind: hit["element"] for kind, hit in survey["kinds"].items() if hit},
            truth_found=survey["truth_found"],
            price_distance=survey["price_distance"],
            layer=None if cleared is None else "; ".join(cleared["layers"]),
        )
        try:
            for injection in self.injections:
                yield self.measure_injection(page, world, ref, injection)
        finally:
            world.close()

    def measure_injection(
        self, page: Page, world: IsolatedWorld, ref: PageRef, injection: Injection
    ) -> AnchorRow:
        template = self.templates[injection.type]
        try:
            placed = world.call(
                "probe.inject",
                injection.model_dump(mode="json"),
                {"html": template.html, "css": template.css},
                list(ref.prices),
            )
            if not placed.get("placed"):
                return self.row(ref, injection, placed)
            seen = world.call("probe.reveal")
            shot = None
            if self.screenshots is not None:
                target = self.screenshots / screenshot_name(ref, injection)
                page.screenshot(path=str(target), clip=seen["clip"])
                shot = str(target)
            return self.row(ref, injection, placed | seen, screenshot=shot)
        except (PlaywrightError, ProbeError) as exc:
            return self.row(ref, injection, {"anchored": False}, error=str(exc).splitlines()[0])
        finally:
            with suppress(PlaywrightError, ProbeError):
                world.call("probe.remove")

    @staticmethod
    def row(
        ref: PageRef,
        injection: Injection,
        found: dict[str, Any],
        screenshot: str | None = None,
        error: str | None = None,
    ) -> AnchorRow:
        covered = tuple(found.get("covered", ()))
        displaced = tuple(found.get("displaced", ()))
        return AnchorRow(
            page=ref.label,
            shop=ref.shop,
            injection=injection.id,
            type=injection.type,
            anchored=bool(found.get("anchored")),
            anchor_kind=found.get("anchor_kind"),
            rule=found.get("rule"),
            anchor=found.get("anchor"),
            slot=found.get("slot"),
            visible=bool(found.get("visible")),
            overlaps=len(covered) + len(displaced),
            covered=covered,
            displaced=displaced,
            distance_px=found.get("distance"),
            screenshot=screenshot,
            error=error,
        )


@contextmanager
def archive_pages(path: Path) -> Iterator[ArchivePages]:
    with replay_server(path, "direct") as server:
        yield ArchivePages(server, path)


def measure(
    targets: Sequence[str],
    injections: Sequence[Injection],
    screenshots: Path | None = None,
    playwright: Playwright | None = None,
) -> Iterator[PageSurvey | AnchorRow]:
    """Every page of `targets` (files, folders, URLs) against every injection, one browser per source."""
    saved, archives, urls = expand(targets)
    truths: dict[Path, dict[str, Truth]] = {}
    refs = [saved_page(path, truths.setdefault(path.parent, load_truth(path.parent))) for path in saved]
    measurement = Measurement(injections, screenshots=screenshots)
    openers: list[AbstractContextManager[PageSource]] = []
    if refs:
        openers.append(nullcontext(SavedPages(refs)))
    openers += [archive_pages(path) for path in archives]
    if urls:
        openers.append(nullcontext(LivePages(urls)))
    with playwright_driver(playwright) as driver:
        for opener in openers:
            with opener as source, launch_browser(driver, source.profile()) as browser:
                yield from measurement.run(browser, source)


class TypeSummary(Frozen):
    """The goal per pattern type: of all (page, injection) pairs, how many anchored, showed, hid nothing."""

    type: PatternType
    pairs: int
    anchored: int
    visible: int
    clean: int = Field(description="anchored, visible and no page control overlapped")

    @property
    def rate(self) -> float:
        return self.clean / self.pairs if self.pairs else 0.0

    @property
    def met(self) -> bool:
        return self.pairs > 0 and self.rate >= GOAL


def summarize(rows: Sequence[AnchorRow]) -> list[TypeSummary]:
    summaries = []
    for pattern_type in PATTERN_TYPES:
        mine = [row for row in rows if row.type == pattern_type]
        if mine:
            summaries.append(
                TypeSummary(
                    type=pattern_type,  # type: ignore[arg-type]
                    pairs=len(mine),
                    anchored=sum(row.anchored for row in mine),
                    visible=sum(row.anchored and row.visible for row in mine),
                    clean=sum(row.clean for row in mine),
                )
            )
    return summaries
