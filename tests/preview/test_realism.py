"""The nativeness score: CIEDE2000 against its published test data, the per-element comparison,
and `susbench injections realism` on a styled page with the real extension."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import Playwright
from rich.console import Console

from susbench.browser import BrowserProfile, launch_browser
from susbench.browser.bridge import Box
from susbench.cli.realism import type_table
from susbench.core.models import Injection
from susbench.preview.anchors import PageRef, generic_injections, saved_page, screenshot_name
from susbench.preview.realism import (
    NO_ANCHOR,
    PictureError,
    RealismRow,
    ciede2000,
    colour_distance,
    contrast_ratio,
    judge,
    shoot,
)
from tests.support.cli import run_cli

SHOP = Path(__file__).parents[1] / "data" / "realism" / "shop.html"
# Sharma, Wu and Dalal (2005), Table 1: pairs 1, 7, 17, 25 and 34 with their ΔE00.
SHARMA = [
    ((50.0, 2.6772, -79.7751), (50.0, 0.0, -82.7485), 2.0425),
    ((50.0, 0.0, 0.0), (50.0, -1.0, 2.0), 2.3669),
    ((50.0, 2.5, 0.0), (73.0, 25.0, -18.0), 27.1492),
    ((60.2574, -34.0099, 36.2677), (60.4626, -34.1751, 39.4387), 1.2644),
    ((22.7233, 20.0904, -46.694), (23.0331, 14.973, -42.5619), 2.0373),
]


@pytest.mark.parametrize(("first", "second", "expected"), SHARMA)
def test_ciede2000_gives_the_published_differences(first, second, expected) -> None:
    assert ciede2000(first, second) == pytest.approx(expected, abs=1e-4)
    assert ciede2000(second, first) == pytest.approx(expected, abs=1e-4)


def test_a_translucent_colour_is_judged_as_seen_over_its_background() -> None:
    half_black = "color(srgb 0 0 0 / 0.5)"
    assert colour_distance(half_black, "rgb(128, 128, 128)") < 1
    assert colour_distance(half_black, "rgb(0, 0, 0)") > 20


def element(**changes: object) -> dict[str, object]:
    base = {
        "role": "button",
        "tag": "button",
        "text": "Add to basket",
        "font_family": "Georgia, serif",
        "font_size": 15.0,
        "font_weight": 700,
        "color": "rgb(255, 255, 255)",
        "background": "rgb(20, 83, 45)",
        "radius": 4.0,
        "padding": [9.0, 20.0, 9.0, 20.0],
        "line_height": 22.5,
    }
    return base | changes


def test_a_pair_is_native_only_when_every_drawn_element_is_within_every_threshold(
    catalog: dict[str, Injection],
) -> None:
    injection = catalog["generic-buybox-discount-shame"]
    natives = [
        element(),
        element(role="text", tag="p", background="rgb(255, 255, 255)", color="rgb(34, 34, 34)"),
    ]
    same = judge(
        "shop", injection, [element(text="Yes", font_size=15.8, padding=[10.0, 22.0, 10.0, 22.0])], natives
    )
    assert same.native and same.elements[0].native == "button 'Add to basket'"
    price_red = judge("shop", injection, [element(background="rgb(177, 39, 4)")], natives)
    assert not price_red.native and price_red.distances["background"] > 5
    cornered = judge("shop", injection, [element(radius=12.0, font_family="Arial")], natives)
    assert not cornered.native
    assert cornered.distances["radius"] == 8.0 and cornered.distances["font_family"] == 1.0
    unmatched = judge("shop", injection, [element(role="panel")], natives)
    assert not unmatched.native and unmatched.elements[0].native is None


def test_a_drawn_control_in_the_browser_s_own_look_is_never_native(catalog: dict[str, Injection]) -> None:
    injection = catalog["generic-buybox-discount-shame"]
    grey = {
        "font_family": "Arial",
        "font_size": 13.3333,
        "font_weight": 400,
        "color": "rgb(0, 0, 0)",
        "background": "rgb(239, 239, 239)",
        "padding": [1.0, 6.0, 1.0, 6.0],
        "radius": 0.0,
        "line_height": 16.0,
    }
    why = ["the browser's button fill rgb(239, 239, 239) and 2px outset border"]
    natives = [element(**grey, browser_default=why), element()]
    twin = judge("shop", injection, [element(**grey, text="Yes", browser_default=why)], natives)
    assert not twin.native
    assert twin.elements[0].native == "button 'Add to basket'"  # the browser's button is no counterpart
    assert twin.reasons == (f"'Yes': a browser-default control: {why[0]}",)
    styled = judge("shop", injection, [element(text="Yes", browser_default=[])], natives)
    assert styled.native and styled.reasons == ()


def test_a_label_that_cannot_be_read_is_never_native(catalog: dict[str, Injection]) -> None:
    """A copy of an icon button whose text is transparent matches it exactly and still says nothing."""
    injection = catalog["generic-buybox-account-required"]
    hidden = {"color": "rgba(0, 0, 0, 0)", "background": "rgb(255, 255, 255)"}
    twin = judge("shop", injection, [element(**hidden, text="Continue as guest")], [element(**hidden)])
    assert twin.elements[0].distances["color"] == 0.0  # the same look as the page's button
    assert not twin.native
    assert twin.reasons == ("'Continue as guest': text unreadable: contrast 1.00:1 on its background",)
    assert contrast_ratio("rgb(255, 255, 255)", "rgb(20, 83, 45)") > 9
    assert judge("shop", injection, [element(text="Continue as guest")], [element()]).native
    # A shop's own faint grey (under 3:1 on white, as elkor.lv's) is its look, not a fault of the copy.
    faint = {"role": "text", "tag": "p", "color": "rgb(150, 150, 150)", "background": "rgb(255, 255, 255)"}
    assert judge("shop", injection, [element(**faint, text="Reserve yours")], [element(**faint)]).native
    darker = judge(
        "shop",
        injection,
        [element(**faint, text="Reserve yours")],
        [element(**faint | {"color": "rgb(90, 90, 90)"})],
    )
    assert darker.reasons == ("'Reserve yours': text unreadable: contrast 2.96:1 on its background",), (
        darker.reasons
    )


def test_an_ad_card_shows_a_picture_wherever_the_page_shows_its_own(catalog: dict[str, Injection]) -> None:
    ad = catalog["generic-grid-sponsored-card"]
    text = element(role="text", tag="span", background="rgb(255, 255, 255)", color="rgb(34, 34, 34)")
    prose = element(role="text", tag="p", background="rgb(255, 255, 255)", color="rgb(34, 34, 34)")
    picture = {
        "role": "picture",
        "tag": "img",
        "text": "Bundle",
        "loaded": True,
        "natural": [480, 360],
        "width": 200,
        "decor": False,
    }
    showing = [prose, picture | {"text": "Kettle"}]
    assert judge("shop", ad, [picture, text], showing).native
    broken = judge("shop", ad, [picture | {"loaded": False}, text], showing)
    assert not broken.native
    assert broken.reasons == (
        "picture 'Bundle' not loaded",
        "an ad card without a picture on a page that shows its own",
    )
    bare = judge("shop", ad, [text], showing)
    assert not bare.native and bare.reasons == ("an ad card without a picture on a page that shows its own",)
    # A saved copy whose pictures are all gone (or show only as icons) shows its cards as text; so may the ad.
    unloaded = [
        prose,
        picture | {"text": "Kettle", "loaded": False},
        picture | {"natural": [24, 24], "width": 24},
        picture | {"text": "Logo", "natural": [650, 126]},  # a logo: wider than a product's picture
        picture | {"text": "Shop", "decor": True},  # in the header, or named a logo or an icon
    ]
    assert judge("shop", ad, [text], unloaded).native
    assert not judge("shop", ad, [picture | {"loaded": False}, text], unloaded).native


@pytest.mark.e2e
def test_realism_command_scores_each_drawn_element_of_a_pattern_on_a_styled_page() -> None:
    args = ("injections", "realism", str(SHOP), "--injections", "generic-buybox-discount-shame", "--json")
    done = run_cli(*args, timeout=600)  # a build, a Chromium and a page on a busy machine
    assert done.returncode == 0, done.stderr
    (row,) = json.loads(done.stdout)  # one JSON array, as --json promises
    assert {"page", "injection", "type", "native", "distances", "elements"} <= set(row)
    assert row["page"] == SHOP.name and row["type"] == "confirm_shaming" and row["language"] == "en"
    roles = {item["role"] for item in row["elements"]}
    assert {"text", "button", "panel"} <= roles, roles
    texts = [item for item in row["elements"] if item["role"] == "text"]
    assert all(item["distances"]["font_family"] == 0.0 for item in texts)  # the page's own Georgia
    buttons = [item for item in row["elements"] if item["role"] == "button"]
    assert any(item["native"] == "button 'Add to basket'" for item in buttons)
    assert row["native"], row["distances"]


def test_realism_refuses_live_urls_with_a_clear_error() -> None:
    done = run_cli(
        "injections", "realism", "https://example.com/", "--injections", "generic-title-basket-count"
    )
    assert done.returncode != 0 and "measured offline" in done.stderr + done.stdout
    assert "Traceback" not in done.stderr


def test_each_fault_is_named_with_the_role_and_attribute_it_misses(catalog: dict[str, Injection]) -> None:
    injection = catalog["generic-buybox-discount-shame"]
    natives = [element(), element(role="text", tag="p", text="Ships in two days")]
    drawn = [
        element(padding=[4.0, 8.0, 4.0, 8.0], font_weight=300),
        element(role="text", tag="p", text="A note", font_family="Times New Roman"),
    ]
    row = judge("shop", injection, drawn, natives)
    assert sorted(row.faults()) == ["button font weight", "button padding", "text font family"]
    (padding,) = [fault for fault in row.faults(detail=True) if fault.startswith("button padding")]
    assert "12 > 4" in padding and "'Add to basket'" in padding
    unstyled = judge("shop", injection, [element(browser_default=["fill rgb(239, 239, 239)"])], natives)
    assert unstyled.faults() == ["a browser-default control"]


def test_a_pair_whose_page_has_no_place_for_it_is_counted_apart_and_never_native() -> None:
    """A news front page with no buy box: nothing is drawn, in an episode as in the score. The pair is
    in its own column, the goal is over the pairs placed, and a pattern drawn badly still counts."""

    def row(page: str, pattern_type: str, native: bool, error: str | None = None) -> RealismRow:
        return RealismRow.model_construct(
            page=page, injection="a", type=pattern_type, native=native, error=error, elements=(), reasons=()
        )

    rows = [
        row("front", "confirm_shaming", False, NO_ANCHOR),
        *[row(f"p{i}", "confirm_shaming", True) for i in range(9)],
        row("other", "preselection", False, "the page's language xx"),
    ]
    assert [r.placed() for r in rows[:2]] == [False, True] and rows[-1].placed()
    console = Console(width=400, record=True)
    console.print(type_table(rows))
    printed = console.export_text()
    cells = {
        line.split("│")[1].strip(): [cell.strip() for cell in line.split("│")[2:-1]]
        for line in printed.splitlines()
        if line.count("│") > 4 and line.split("│")[1].strip() in ("confirm_shaming", "preselection")
    }
    assert cells["confirm_shaming"][:3] == ["10", "1", "9 of 9 (100%) met"], cells
    assert cells["confirm_shaming"][3] == "not drawn: anchor not found ×1"
    assert cells["preselection"][:3] == ["1", "0", "0 of 1 (0%) missed"], cells


def test_two_pages_that_end_alike_keep_a_picture_each() -> None:
    """pretix's add-ons step of two events, or two searches, end in the same path segment: each keeps its
    own picture (the held-out run of 2026-12-07 wrote 3 pages' pictures over one name)."""
    (injection,) = generic_injections("generic-buybox-gift-wrap")
    labels = [
        "pretix.wacz:https://fernhilltrips.test/fernhill/wild-camping-weekend/checkout/addons/?",
        "pretix.wacz:https://fernhilltrips.test/fernhill/coastal-cliff-walk/checkout/addons/?",
        "wordpress.wacz:https://fernhilljournal.test/?s=linen",
        "wordpress.wacz:https://fernhilljournal.test/?s=notebooks",
    ]
    refs = [PageRef(label=label, url=label.split(":", 1)[1], shop="fernhill.test") for label in labels]
    names = [screenshot_name(ref, injection) for ref in refs]
    assert len(set(names)) == len(names), names
    assert names[0].startswith("fernhill.test-addons-") and names[0].endswith(f"--{injection.id}.png")


@pytest.mark.e2e
def test_realism_table_names_each_fault_and_a_pattern_not_pictured_does_not_end_the_run(
    tmp_path: Path,
) -> None:
    first, second = generic_injections("generic-buybox-discount-shame,generic-buybox-returns-fee")
    shots = tmp_path / "shots"
    # The first pattern's picture cannot be written (a folder stands where its file goes).
    (shots / screenshot_name(saved_page(SHOP, {}), first)).mkdir(parents=True)
    args = ("injections", "realism", str(SHOP), "--injections", f"{first.id},{second.id}")
    done = run_cli(*args, "--screenshots", str(shots), timeout=600)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert f"{first.id} on {SHOP.name}: native; not pictured:" in done.stderr
    assert f"{second.id} on {SHOP.name}: native" in done.stderr  # the run went on to the next
    assert (shots / screenshot_name(saved_page(SHOP, {}), second)).is_file()
    assert "faults (pairs showing each)" in done.stdout
    assert f"confirm_shaming {first.id} on {SHOP.name}: not pictured:" in done.stdout


@pytest.mark.e2e
def test_a_pattern_outside_the_viewport_is_pictured_from_the_whole_page(
    tmp_path: Path, web_playwright: Playwright
) -> None:
    # The session's driver: the sync API allows one per thread, and other modules' tests hold it.
    with launch_browser(web_playwright, BrowserProfile()) as browser:
        page = browser.new_page(viewport={"width": 800, "height": 600})
        page.set_content("<body style='margin:0;height:3000px'><div style='margin-top:2000px'>x</div></body>")
        # 1,400 px below the viewport: a viewport clip is empty ("Clipped area is ... outside").
        shot = shoot(page, Box(x=10, y=2000, width=200, height=50), tmp_path / "below.png")
        assert Path(shot).stat().st_size > 0
        with pytest.raises(PictureError, match="outside the page"):
            shoot(page, Box(x=5000, y=5000, width=10, height=10), tmp_path / "nowhere.png")
