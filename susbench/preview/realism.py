"""Does a drawn pattern look as if the page drew it? The measurement behind `injections realism`.

Each page is opened offline in Chromium with the real extension (saved HTML answered at its URL,
WARC/WACZ pages from the replayer, as `injections anchor` does); each generic injection is drawn
in turn, and every element it draws (text, buttons, its panel) is compared with the nearest native
element of the same role on that page: font family, font size, weight, text and background colour
(CIEDE2000), border radius, padding and line height. A pair is native when every drawn element has
a native counterpart within every threshold. The drawn elements sit in a closed shadow root, so
they are read through the DevTools protocol (DOM with shadow roots pierced, then each node's own
computed style), never by opening the root to the page.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext, suppress
from pathlib import Path
from typing import Any, Literal

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page, Playwright
from pydantic import Field

from susbench.browser import LocalBackend, playwright_driver
from susbench.browser.bridge import Box, ExtensionBridge
from susbench.browser.semantic import IsolatedWorld, load_vocabulary, semantic_source
from susbench.catalog.injections import build_extension
from susbench.core.errors import InputError, SusbenchError
from susbench.core.models import Frozen, Injection, PatternType
from susbench.core.paths import EXTENSION_DIR
from susbench.preview.anchors import (
    PageRef,
    PageSource,
    SavedPages,
    archive_pages,
    expand,
    load_truth,
    saved_page,
    screenshot_name,
)

MEASURE_JS = Path(__file__).with_name("realism.js")
CTA_JS = Path(__file__).with_name("cta.js")
CTA_MARK = "data-susbench-cta"
# How a box is drawn (its corners, a card's padding), read by the same code the drawing uses.
BOXES_JS = EXTENSION_DIR / "content" / "boxes.js"
Role = Literal["text", "button", "panel"]
# What each role is compared on (a panel has no text of its own to set in a font).
ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "text": ("font_family", "font_size", "font_weight", "color", "background", "line_height"),
    "button": (
        "font_family",
        "font_size",
        "font_weight",
        "color",
        "background",
        "fill_image",
        "radius",
        "padding",
        "line_height",
    ),
    "panel": ("background", "radius", "padding"),
}
# The thresholds (docs/realpages.md says how they were set): px, CIEDE2000, weight steps.
THRESHOLDS = {
    "font_family": 0.0,
    "font_size": 1.0,
    "font_weight": 100.0,
    "color": 5.0,
    "background": 5.0,
    "fill_image": 5.0,
    "radius": 2.0,
    "padding": 4.0,
    "line_height": 2.0,
}
SETTLE_S = 8.0
LOAD_MS = 90_000
# How much of the page around the drawn pattern a screenshot keeps, so it is judged beside its neighbours.
SHOT_MARGIN_PX = 120
# A product's picture, by the rule extension/content/look.js takes one for an ad with: natural width and
# height, the width it is shown at, and no wider than this many times its height (logos, banners).
PICTURE_NATURAL_PX = (80, 60)
PICTURE_SHOWN_PX = 60
PICTURE_MAX_ASPECT = 2.5
# The episode's reason when the page has no place for an injection (extension/worker/scoring.js): nothing
# is drawn, in an episode as here.
NO_ANCHOR = "anchor not found"
# The least contrast a drawn text may have with what is behind it (WCAG's for large text and controls).
MIN_CONTRAST = 3.0
# Below this a text is not seen at all (a transparent or near-transparent one): never a look to copy.
MIN_VISIBLE_CONTRAST = 1.5


class ElementMatch(Frozen):
    """One drawn element against its nearest native element of the same role."""

    role: Role
    text: str
    native: str | None = Field(description="the native element it was compared with (tag and text)")
    distances: dict[str, float] = Field(default_factory=dict)
    matches: bool
    reason: str | None = Field(default=None, description="why it is not native whatever its distances")


class RealismRow(Frozen):
    """One page and one injection: the line `--json` prints."""

    page: str
    injection: str
    type: PatternType
    native: bool
    language: str | None = None
    language_by: str | None = Field(
        default=None, description="how the page's language was told: its declaration, or its text and why"
    )
    elements: tuple[ElementMatch, ...] = ()
    distances: dict[str, float] = Field(
        default_factory=dict, description="per attribute, the worst distance over the drawn elements"
    )
    reasons: tuple[str, ...] = Field(
        default=(), description="faults no distance shows: a browser control, a missing picture"
    )
    error: str | None = None
    screenshot: str | None = None
    not_pictured: str | None = Field(
        default=None, description="why --screenshots could not picture the drawn pattern (the run goes on)"
    )

    def placed(self) -> bool:
        """Whether the page has a place for the injection. A page with none (a news front page with no
        buy box, price or title to anchor on) is shown no pattern, by the benchmark as here: the pair
        has no look to judge, and the table counts it apart, never as native (docs/realpages.md)."""
        return self.error != NO_ANCHOR

    def faults(self, detail: bool = False) -> list[str]:
        """Each fault that keeps the pair from native, by name (a drawn element's role and what it
        misses, a named reason, or why nothing was drawn): the realism table counts these. With
        `detail`, each also says by how much and against which native element."""
        if self.error:
            return [f"not drawn: {self.error}"]
        found: list[str] = []
        for element in self.elements:
            if element.native is None:
                found.append(f"{element.role}: nothing of its role on the page")
            for name, value in element.distances.items():
                if value > THRESHOLDS[name]:
                    named = f"{element.role} {name.replace('_', ' ')}"
                    against = f" {value:g} > {THRESHOLDS[name]:g}, {element.text!r} against {element.native}"
                    found.append(named + (against if detail else ""))
        for reason in self.reasons:
            # "'Label': a browser-default control: fill ..." -> "a browser-default control"
            named = re.sub(r"'[^']*'", "…", re.sub(r"^'[^']*': ", "", reason)).split(":")[0]
            found.append(f"{named} ({reason})" if detail else named)
        return found


def _rgba(color: str) -> tuple[float, float, float, float] | None:
    """A computed colour: rgb()/rgba() in 0-255, or color(srgb ...) in 0-1 (what color-mix() gives)."""
    match = re.match(r"(rgba?|color)\(\s*(?:srgb\s+)?([^)]+)\)", color.strip())
    if not match:
        return None
    parts = [float(part) for part in re.split(r"[ ,/]+", match.group(2).strip()) if part]
    if len(parts) < 3:
        return None
    scale = 255.0 if match.group(1) == "color" else 1.0
    return parts[0] * scale, parts[1] * scale, parts[2] * scale, parts[3] if len(parts) > 3 else 1.0


def _rgb(color: str, over: str = "rgb(255, 255, 255)") -> tuple[float, float, float] | None:
    """The colour as seen: a translucent one composited over `over`."""
    rgba = _rgba(color)
    if rgba is None:
        return None
    r, g, b, alpha = rgba
    if alpha >= 1:
        return r, g, b
    base = _rgb(over) or (255.0, 255.0, 255.0)
    return tuple(alpha * c + (1 - alpha) * u for c, u in zip((r, g, b), base, strict=True))  # type: ignore[return-value]


def _lab(rgb: tuple[float, float, float]) -> tuple[float, float, float]:
    def linear(channel: float) -> float:
        c = channel / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(c) for c in rgb)
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 216 / 24389 else (24389 / 27 * t + 16) / 116

    fx, fy, fz = f(x), f(y), f(z)
    return 116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)


def ciede2000(lab1: tuple[float, float, float], lab2: tuple[float, float, float]) -> float:
    """The CIEDE2000 colour difference (Sharma, Wu and Dalal 2005), kL = kC = kH = 1."""
    l1, a1, b1 = lab1
    l2, a2, b2 = lab2
    c_bar = (math.hypot(a1, b1) + math.hypot(a2, b2)) / 2
    g = 0.5 * (1 - math.sqrt(c_bar**7 / (c_bar**7 + 25**7)))
    a1p, a2p = (1 + g) * a1, (1 + g) * a2
    c1p, c2p = math.hypot(a1p, b1), math.hypot(a2p, b2)
    h1p = math.degrees(math.atan2(b1, a1p)) % 360 if c1p else 0.0
    h2p = math.degrees(math.atan2(b2, a2p)) % 360 if c2p else 0.0
    dlp, dcp = l2 - l1, c2p - c1p
    dhp = 0.0
    if c1p * c2p:
        dhp = h2p - h1p
        dhp = dhp - 360 if dhp > 180 else dhp + 360 if dhp < -180 else dhp
    dhp_big = 2 * math.sqrt(c1p * c2p) * math.sin(math.radians(dhp / 2))
    lp_bar, cp_bar = (l1 + l2) / 2, (c1p + c2p) / 2
    if not c1p * c2p:
        hp_bar = h1p + h2p
    elif abs(h1p - h2p) <= 180:
        hp_bar = (h1p + h2p) / 2
    else:
        hp_bar = (h1p + h2p + 360) / 2 if h1p + h2p < 360 else (h1p + h2p - 360) / 2
    t = (
        1
        - 0.17 * math.cos(math.radians(hp_bar - 30))
        + 0.24 * math.cos(math.radians(2 * hp_bar))
        + 0.32 * math.cos(math.radians(3 * hp_bar + 6))
        - 0.20 * math.cos(math.radians(4 * hp_bar - 63))
    )
    s_l = 1 + 0.015 * (lp_bar - 50) ** 2 / math.sqrt(20 + (lp_bar - 50) ** 2)
    s_c = 1 + 0.045 * cp_bar
    s_h = 1 + 0.015 * cp_bar * t
    r_t = (
        -2
        * math.sqrt(cp_bar**7 / (cp_bar**7 + 25**7))
        * math.sin(math.radians(60 * math.exp(-(((hp_bar - 275) / 25) ** 2))))
    )
    return math.sqrt(
        (dlp / s_l) ** 2 + (dcp / s_c) ** 2 + (dhp_big / s_h) ** 2 + r_t * (dcp / s_c) * (dhp_big / s_h)
    )


def colour_distance(first: str, second: str, first_over: str = "", second_over: str = "") -> float:
    a = _rgb(first, first_over or "rgb(255, 255, 255)")
    b = _rgb(second, second_over or "rgb(255, 255, 255)")
    return 100.0 if a is None or b is None else ciede2000(_lab(a), _lab(b))


def image_distance(first: str, second: str) -> float:
    """How far apart two fills' images are: none and none 0; gradients of as many stops, the worst
    CIEDE2000 of their stops; a picture, 0 only for the same picture; else 100."""
    if first == second:
        return 0.0
    stops = [re.findall(r"rgba?\([^)]*\)", image) for image in (first, second)]
    gradients = all("gradient" in image for image in (first, second))
    if gradients and stops[0] and len(stops[0]) == len(stops[1]):
        return max(colour_distance(a, b) for a, b in zip(*stops, strict=True))
    return 100.0


def _family(stack: str) -> str:
    return stack.split(",")[0].strip().strip("\"'").lower()


def distances(drawn: dict[str, Any], native: dict[str, Any]) -> dict[str, float]:
    """Per attribute of the role, how far the drawn element is from the native one."""
    result: dict[str, float] = {}
    for name in ATTRIBUTES[drawn["role"]]:
        if name == "font_family":
            result[name] = 0.0 if _family(drawn[name]) == _family(native[name]) else 1.0
        elif name == "color":
            found = colour_distance(drawn[name], native[name], drawn["background"], native["background"])
            result[name] = round(found, 2)
        elif name == "background":
            result[name] = round(colour_distance(drawn[name], native[name]), 2)
        elif name == "fill_image":
            result[name] = round(image_distance(drawn.get(name, "none"), native.get(name, "none")), 2)
        elif name == "padding":
            result[name] = max(abs(a - b) for a, b in zip(drawn[name], native[name], strict=True))
        else:
            result[name] = round(abs(float(drawn[name]) - float(native[name])), 2)
    return result


def contrast_ratio(color: str, background: str) -> float:
    """WCAG's contrast ratio (1 to 21) of a text colour, composited over its background."""
    ground = _rgb(background) or (255.0, 255.0, 255.0)
    ink = _rgb(color, background) or ground

    def relative(rgb: tuple[float, float, float]) -> float:
        def linear(channel: float) -> float:
            c = channel / 255
            return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

        r, g, b = (linear(c) for c in rgb)
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    lighter, darker = sorted((relative(ink), relative(ground)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def legible_floor(role: str, natives: Sequence[dict[str, Any]]) -> float:
    """The least contrast a drawn text of `role` may have: WCAG's 3:1, or the faintest text of that
    role the page itself shows (a shop's own light grey is its look), never below what can be seen."""
    shown = [
        contrast_ratio(item["color"], item["background"])
        for item in natives
        if item["role"] == role and item["text"].strip()
    ]
    seen = [ratio for ratio in shown if ratio >= MIN_VISIBLE_CONTRAST]
    return min([MIN_CONTRAST, *seen])


def _misses(found: dict[str, float]) -> int:
    return sum(value > THRESHOLDS[name] for name, value in found.items())


def nearest(drawn: dict[str, Any], natives: Sequence[dict[str, Any]]) -> ElementMatch:
    """The native element of the same role that fails fewest thresholds (then: smallest distances).

    A native control in the browser's own look (a saved copy's button whose stylesheet was lost) is
    no look of the page's while the page styles any of its buttons or fields: then it is no
    counterpart, and a drawn one in that look is never native. A page whose every control is in the
    browser's look (eBay's saved search page) shows that look, and a copy of it is the page's.
    """
    unstyled = not any(
        item["role"] in ("button", "field") and not item.get("browser_default") for item in natives
    )
    same = [
        item
        for item in natives
        if item["role"] == drawn["role"] and (unstyled or not item.get("browser_default"))
    ]
    # A drawn call to action copies the page's own, found by meaning: it is held against that alone.
    cta = [item for item in natives if item.get("cta") and not item.get("browser_default")]
    if "primary" in drawn.get("look", "").split() and cta:
        same = cta
    default = [] if unstyled else drawn.get("browser_default") or []
    reason = f"a browser-default control: {'; '.join(default)}" if default else None
    if drawn["role"] in ("text", "button") and drawn["text"].strip():
        ratio = contrast_ratio(drawn["color"], drawn["background"])
        if ratio < legible_floor(drawn["role"], natives):
            # A label that cannot be read is no copy of the page's, whatever it matches (olx.com.pk's
            # icon button with transparent text was copied for "Continue as guest" and scored native).
            reason = f"text unreadable: contrast {ratio:.2f}:1 on its background"
    best: tuple[tuple[int, float], dict[str, Any], dict[str, float]] | None = None
    for item in same:
        found = distances(drawn, item)
        score = (_misses(found), sum(v / (THRESHOLDS[k] or 1) for k, v in found.items()))
        if best is None or score < best[0]:
            best = (score, item, found)
    if best is None:
        return ElementMatch(role=drawn["role"], text=drawn["text"], native=None, matches=False, reason=reason)
    _, item, found = best
    return ElementMatch(
        role=drawn["role"],
        text=drawn["text"],
        native=f"{item['tag']} {item['text']!r}",
        distances=found,
        matches=_misses(found) == 0 and reason is None,
        reason=reason,
    )


def shows_pictures(natives: Sequence[dict[str, Any]]) -> bool:
    """Whether the page shows a product's picture of its own (a saved copy often shows none)."""
    return any(
        item["role"] == "picture"
        and item["loaded"]
        and not item["decor"]
        and item["natural"][0] <= item["natural"][1] * PICTURE_MAX_ASPECT
        and item["natural"][0] >= PICTURE_NATURAL_PX[0]
        and item["natural"][1] >= PICTURE_NATURAL_PX[1]
        and item["width"] >= PICTURE_SHOWN_PX
        for item in natives
    )


def picture_faults(
    pattern_type: PatternType, drawn: Sequence[dict[str, Any]], natives: Sequence[dict[str, Any]]
) -> list[str]:
    """A drawn picture must show a real image. An ad is a card of the page's: where the page's own
    cards show pictures, so must the ad; where none of the page's pictures shows, neither can its."""
    pictures = [item for item in drawn if item["role"] == "picture"]
    faults = [f"picture {item['text']!r} not loaded" for item in pictures if not item["loaded"]]
    if (
        pattern_type == "disguised_ad"
        and shows_pictures(natives)
        and not any(item["loaded"] for item in pictures)
    ):
        faults.append("an ad card without a picture on a page that shows its own")
    return faults


def judge(
    page: str, injection: Injection, drawn: Sequence[dict[str, Any]], natives: Sequence[dict[str, Any]]
) -> RealismRow:
    styled = [item for item in drawn if item["role"] != "picture"]
    elements = tuple(nearest(item, natives) for item in styled)
    worst: dict[str, float] = {}
    for element in elements:
        for name, value in element.distances.items():
            worst[name] = max(worst.get(name, 0.0), value)
    reasons = [f"{element.text!r}: {element.reason}" for element in elements if element.reason]
    reasons += picture_faults(injection.type, drawn, natives)
    return RealismRow(
        page=page,
        injection=injection.id,
        type=injection.type,
        native=bool(elements) and all(element.matches for element in elements) and not reasons,
        elements=elements,
        distances=worst,
        reasons=tuple(reasons),
        error=None if elements else "nothing drawn was measured",
    )


def _frames(node: dict[str, Any]) -> Iterator[int]:
    """Backend ids of the pattern frames in closed shadow roots (the extension's drawing)."""
    for root in node.get("shadowRoots", ()):
        if root.get("shadowRootType") == "closed":
            for child in root.get("children", ()):
                attributes = child.get("attributes", [])
                if (
                    "data-part" in attributes[::2]
                    and attributes[attributes.index("data-part") + 1] == "frame"
                ):
                    yield child["backendNodeId"]
    for child in (*node.get("children", ()), *node.get("shadowRoots", ())):
        yield from _frames(child)


def _measure_source() -> str:
    return BOXES_JS.read_text(encoding="utf-8") + MEASURE_JS.read_text(encoding="utf-8")


def drawn_elements(page: Page) -> list[dict[str, Any]]:
    """The look of every element the extension drew on `page`, read through the DevTools protocol."""
    source = _measure_source()
    cdp = page.context.new_cdp_session(page)
    try:
        cdp.send("DOM.enable")
        tree = cdp.send("DOM.getDocument", {"depth": -1, "pierce": True})
        found: list[dict[str, Any]] = []
        for backend in _frames(tree["root"]):
            remote = cdp.send("DOM.resolveNode", {"backendNodeId": backend})
            result = cdp.send(
                "Runtime.callFunctionOn",
                {
                    "objectId": remote["object"]["objectId"],
                    "functionDeclaration": f"function() {{ {source}\nreturn realismMeasure(this); }}",
                    "returnByValue": True,
                },
            )
            found += result["result"].get("value") or []
        return found
    finally:
        cdp.detach()


def native_elements(page: Page) -> list[dict[str, Any]]:
    """The page's own elements, its call to action marked (found in an isolated world, as the
    extension finds it; the mark is taken away again)."""
    source = _measure_source()
    world = IsolatedWorld(page, "susbench-realism")
    try:
        world.evaluate(semantic_source(load_vocabulary(), CTA_JS, f"markCallToAction(WORDS, {CTA_MARK!r});"))
    finally:
        world.close()
    found = page.evaluate(f"() => {{ {source}\nreturn realismMeasure(document); }}")
    unmark = "(mark) => document.querySelectorAll(`[${mark}]`).forEach((el) => el.removeAttribute(mark))"
    page.evaluate(unmark, CTA_MARK)
    return found


def measure_realism(
    targets: Sequence[str],
    injections: Sequence[Injection],
    playwright: Playwright | None = None,
    screenshots: Path | None = None,
    only: set[str] | None = None,
) -> Iterator[RealismRow]:
    """Every page of `targets` (saved HTML files or folders, WARC/WACZ) against every injection; with
    `only`, just the pages of those names (a half of `realism_halves.yaml`). Each page is measured once.

    With `screenshots`, a PNG of each drawn pattern and its surroundings goes there: what an episode
    shows (the extension's own drawing, in the page's language), for judging by eye.
    """
    if screenshots is not None:
        screenshots.mkdir(parents=True, exist_ok=True)
    saved, archives, urls = expand(targets)
    if urls:
        raise InputError(f"{urls[0]}: realism is measured offline, on saved pages and web archives only")
    truths: dict[Path, Any] = {}
    refs = [saved_page(path, truths.setdefault(path.parent, load_truth(path.parent))) for path in saved]
    openers: list[AbstractContextManager[PageSource]] = [nullcontext(SavedPages(refs))] if refs else []
    openers += [archive_pages(path) for path in archives]
    extension = build_extension()
    with playwright_driver(playwright) as driver:
        for opener in openers:
            with opener as source:
                profile = source.profile().model_copy(update={"extension_dir": extension})
                # An archive lists a page once per session that visited it (oscar's basket 14 times).
                wanted = [ref for ref in source.pages if only is None or ref.label in only]
                pages = list({ref.label: ref for ref in wanted}.values())
                if not pages:
                    continue
                with LocalBackend(driver).launch(profile) as session:
                    bridge = ExtensionBridge(session.context)
                    for ref in pages:
                        for injection in injections:
                            page = session.context.new_page()
                            yield _pair(page, bridge, source, ref, injection, screenshots)


def _clip(box: Box, left: float, top: float, right: float, bottom: float) -> dict[str, float] | None:
    """The box with its margin, cut to the rectangle (left, top, right, bottom); None if nothing is left."""
    x0, y0 = max(left, box.x - SHOT_MARGIN_PX), max(top, box.y - SHOT_MARGIN_PX)
    x1 = min(right, box.x + box.width + SHOT_MARGIN_PX)
    y1 = min(bottom, box.y + box.height + SHOT_MARGIN_PX)
    return {"x": x0, "y": y0, "width": x1 - x0, "height": y1 - y0} if x1 - x0 >= 1 and y1 - y0 >= 1 else None


def shoot(page: Page, box: Box, target: Path) -> str:
    """The drawn pattern with a margin of the page around it, inside the viewport; a pattern not in
    the viewport (scrolled out, or the viewport too small) is taken from the whole document."""
    view = page.viewport_size or {"width": 1280, "height": 800}
    clip = _clip(box, 0.0, 0.0, float(view["width"]), float(view["height"]))
    whole = clip is None
    if whole:
        x, y, width, height = page.evaluate(
            "() => [scrollX, scrollY, document.documentElement.scrollWidth,"
            " document.documentElement.scrollHeight]"
        )
        moved = box.model_copy(update={"x": box.x + x, "y": box.y + y})
        clip = _clip(moved, 0.0, 0.0, float(width), float(height))
    if clip is None:
        where = f"{box.x:.0f},{box.y:.0f} ({box.width:.0f} x {box.height:.0f} px)"
        raise PictureError(f"the pattern's box at {where} is outside the page")
    try:
        page.screenshot(path=str(target), clip=clip, full_page=whole)
    except (PlaywrightError, OSError) as exc:
        raise PictureError(str(exc).splitlines()[0]) from None
    return str(target)


class PictureError(Exception):
    """A drawn pattern the browser could not picture (its row says why; the run goes on)."""


def _pair(
    page: Page,
    bridge: ExtensionBridge,
    source: PageSource,
    ref: PageRef,
    injection: Injection,
    screenshots: Path | None = None,
) -> RealismRow:
    """One page and one injection; whatever goes wrong with this pair is its row's error, never the
    end of the run."""
    try:
        source.prepare(page, ref)
        with bridge.episode(f"realism-{injection.id}", injection.id) as episode:
            page.goto(ref.url, wait_until="domcontentloaded", timeout=LOAD_MS)
            if not bridge.choices(page, wait=SETTLE_S):
                return RealismRow(
                    page=ref.label,
                    injection=injection.id,
                    type=injection.type,
                    native=False,
                    error=episode.report().reason,
                )
            box = bridge.panel(page, scroll=True)
            row = judge(ref.label, injection, drawn_elements(page), native_elements(page))
            shot, not_pictured = None, None
            if screenshots is not None:
                try:
                    if box is None:
                        raise PictureError("the extension names no box for the pattern")
                    shot = shoot(page, box, screenshots / screenshot_name(ref, injection))
                except PictureError as exc:
                    not_pictured = str(exc)
            report = episode.report()
    except (PlaywrightError, SusbenchError) as exc:
        return RealismRow(
            page=ref.label,
            injection=injection.id,
            type=injection.type,
            native=False,
            error=f"not measured: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}",
        )
    finally:
        with suppress(PlaywrightError):
            page.close()
    spoken = [event.detail for event in report.events if event.kind == "injected"]
    return row.model_copy(
        update={
            "language": spoken[0].get("language") if spoken else None,
            "language_by": spoken[0].get("language_by") if spoken else None,
            "screenshot": shot,
            "not_pictured": not_pictured,
        }
    )
