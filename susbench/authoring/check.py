"""Checking a draft as a reviewer would before reading it: is it a valid injection, do its anchors
exist on the page, does the real extension draw it there, what does it look like in place, and does
it look like the page's own (the nativeness score of `injections realism`, measured in place)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page
from pydantic import Field

from susbench.browser import LocalBackend, replay_profile
from susbench.browser.bridge import ExtensionBridge
from susbench.browser.semantic import IsolatedWorld
from susbench.catalog.injections import build_extension
from susbench.core.errors import SusbenchError
from susbench.core.models import Frozen, Injection
from susbench.preview.injection_preview import shoot_in_place
from susbench.preview.realism import THRESHOLDS, ElementMatch, drawn_elements, judge, native_elements
from susbench.replayer.factory import replay_server

CHECK = "check.json"
COUNT_JS = """(selector) => { try { return document.querySelectorAll(selector).length; } catch (error) {
  return -1; } }"""


# The realism attributes in a reviewer's words, and how a distance in each is written.
ATTRIBUTE_WORDS = {
    "font_family": ("font family", "{:g}"),
    "font_size": ("font size", "{:g} px"),
    "font_weight": ("font weight", "{:g}"),
    "color": ("text colour", "ΔE {:.1f}"),
    "background": ("background colour", "ΔE {:.1f}"),
    "radius": ("corner radius", "{:g} px"),
    "padding": ("padding", "{:g} px"),
    "line_height": ("line height", "{:g} px"),
}


class Look(Frozen):
    """The nativeness score of the draft drawn in place: how many of the elements it draws look like
    one of the page's own (same role, every attribute within the realism thresholds)."""

    native: bool = Field(description="every drawn element has a native counterpart within every threshold")
    matching: int = Field(ge=0, description="drawn elements that look like one of the page's own")
    measured: int = Field(ge=0, description="drawn elements measured")
    differences: tuple[str, ...] = Field(default=(), description="what gives the pattern away, in words")
    elements: tuple[ElementMatch, ...] = ()

    def summary(self) -> str:
        verdict = "looks native" if self.native else "does not look native"
        return f"{verdict}: {self.matching} of {self.measured} drawn elements look like the page's own"


class DraftCheck(Frozen):
    """What the check found: problems in the researcher's terms, the preview if one was drawn, and
    the nativeness score (reported beside the problems: a foreign look is for the reviewer to judge)."""

    anchors: dict[str, int] = Field(default_factory=dict, description="CSS anchor -> elements it matches")
    injected: bool = False
    preview: str | None = Field(default=None, description="file name of the screenshot in place")
    problems: tuple[str, ...] = ()
    look: Look | None = Field(default=None, description="the nativeness score; None: nothing was drawn")


def _apart(name: str, distance: float) -> str:
    if name == "font_family":
        return "another font family"
    words, written = ATTRIBUTE_WORDS[name]
    return (
        f"{words} {written.format(distance)} apart (the same look: within {written.format(THRESHOLDS[name])})"
    )


def difference(element: ElementMatch) -> str:
    """Why one drawn element does not look like the page's own, in a reviewer's words."""
    drawn = f"the drawn {element.role} {element.text[:40]!r}"
    if element.native is None:
        return f"{drawn} has nothing to match it: the page shows no {element.role} of its own"
    apart = [_apart(name, value) for name, value in element.distances.items() if value > THRESHOLDS[name]]
    return f"{drawn} is unlike the page's nearest {element.role}, {element.native}: {', '.join(apart)}"


def score_look(page: Page, injection: Injection) -> Look:
    """The nativeness score of the pattern drawn on `page` now."""
    try:
        row = judge(page.url, injection, drawn_elements(page), native_elements(page))
    except PlaywrightError as exc:
        reason = f"its look could not be measured ({exc.message.splitlines()[0]})"
        return Look(native=False, matching=0, measured=0, differences=(reason,))
    unlike = [element for element in row.elements if not element.matches]
    return Look(
        native=row.native,
        matching=len(row.elements) - len(unlike),
        measured=len(row.elements),
        differences=tuple(difference(element) for element in unlike)
        + ((f"nothing the pattern drew could be measured ({row.error})",) if row.error else ()),
        elements=row.elements,
    )


def anchor_problems(counts: dict[str, int]) -> list[str]:
    problems = []
    for selector, count in counts.items():
        if count < 0:
            problems.append(f"anchor {selector!r} is not a valid CSS selector")
        elif count == 0:
            problems.append(f"anchor {selector!r} matches no element on the page")
    if counts and all(count <= 0 for count in counts.values()):
        problems.append("no anchor finds its place, so the pattern cannot be drawn")
    return problems


def check_on_page(drafts: Sequence[tuple[Injection, Path]], snapshot: Path, url: str) -> list[DraftCheck]:
    """Draw each draft alone with the real extension on `url` replayed from `snapshot` (one browser for
    all of them), keeping a preview in its folder."""
    extension = build_extension([injection for injection, _ in drafts])
    with (
        replay_server(snapshot, "direct") as server,
        LocalBackend().launch(
            replay_profile(server).model_copy(update={"extension_dir": extension})
        ) as session,
    ):
        bridge = ExtensionBridge(session.context)
        checks = []
        for injection, folder in drafts:
            server.new_episode()
            checks.append(_check_one(session.context.new_page(), bridge, injection, url, folder))
    return checks


def _check_one(
    page: Page, bridge: ExtensionBridge, injection: Injection, url: str, folder: Path
) -> DraftCheck:
    with bridge.episode(f"draft-{injection.id}", injection.id):
        try:
            page.goto(url, wait_until="domcontentloaded")
        except PlaywrightError as exc:
            return DraftCheck(problems=(f"{url}: the snapshot does not replay it ({exc.message})",))
        world = IsolatedWorld(page, "susbench-draft-check")
        try:
            selectors = [anchor.css for anchor in injection.page.anchors if anchor.css]
            counts = {selector: int(world.call(f"({COUNT_JS})", selector)) for selector in selectors}
        finally:
            world.close()
        problems = anchor_problems(counts)
        preview: str | None = f"preview-{injection.id}.png"
        look = None
        try:
            shoot_in_place(page, bridge, injection, folder / preview)
            look = score_look(page, injection)
        except SusbenchError as exc:
            problems.append(f"the extension drew nothing: {exc}")
            preview = None
    page.close()
    return DraftCheck(
        anchors=counts, injected=preview is not None, preview=preview, problems=tuple(problems), look=look
    )


def write_check(check: DraftCheck, folder: Path) -> None:
    (folder / CHECK).write_text(json.dumps(check.model_dump(mode="json"), indent=1), encoding="utf-8")
