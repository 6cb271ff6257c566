"""The host page's style model (extension/content/look.js) on one fixture page per fault of the realism
review (docs/realpages.md): each generic pattern, drawn by the real extension in Chromium, copies the
page's own components and borrows no colour the page keeps for something else."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from playwright.sync_api import BrowserContext, Playwright

from susbench.browser import LocalBackend
from susbench.browser.bridge import Box, ExtensionBridge
from susbench.catalog.injections import build_extension
from susbench.core.paths import EXTENSION_DIR
from susbench.preview.anchors import SavedPages, generic_injections, saved_page
from susbench.preview.realism import ElementMatch, RealismRow, measure_realism

PAGES = Path(__file__).parents[1] / "data" / "native"

pytestmark = pytest.mark.e2e


def drawn(page: str, injection: str) -> RealismRow:
    (row,) = measure_realism([str(PAGES / page)], generic_injections(injection))
    assert row.error is None, row.error
    return row


def of_role(row: RealismRow, role: str) -> list[ElementMatch]:
    return [element for element in row.elements if element.role == role]


@pytest.mark.parametrize("injection", ["generic-price-deal-alerts", "generic-price-protection-plan"])
def test_a_pattern_anchored_on_a_red_price_takes_the_body_text_not_the_price_red(injection: str) -> None:
    row = drawn("price-red.html", injection)
    assert row.native, row.distances
    assert not [element for element in row.elements if "14.99" in (element.native or "")], row.elements


def test_a_card_in_a_coloured_buy_box_takes_the_page_s_card_not_the_box_colour() -> None:
    row = drawn("yellow-buybox.html", "generic-buybox-discount-shame")
    assert row.native, row.distances
    (panel,) = of_role(row, "panel")
    assert (panel.native or "").startswith("div 'Delivery"), panel


def test_the_emphasised_choice_copies_the_add_to_cart_control_not_a_grey_button() -> None:
    row = drawn("grey-secondary.html", "generic-buybox-express-delivery")
    assert row.native, row.distances
    emphasised = of_role(row, "button")[0]
    assert emphasised.native == "input 'Add to Cart'" and emphasised.matches, emphasised


def test_forced_action_is_drawn_with_the_page_s_own_button_pair_and_nothing_else() -> None:
    row = drawn("button-pair.html", "generic-buybox-account-required")
    assert row.native, row.distances
    assert [element.role for element in row.elements] == ["panel", "text", "text", "button", "button"]
    assert [element.native for element in of_role(row, "button")] == [
        "button 'Add to basket'",
        "button 'Save for later'",
    ]


def test_pop_up_art_is_in_the_page_s_colours_and_type() -> None:
    row = drawn("grey-primary.html", "generic-app-discount-popup")
    assert row.native, row.distances
    (kicker,) = [element for element in row.elements if element.text == "-15%"]
    assert kicker.native == "p 'Free delivery on orders over €50'", kicker


def test_social_proof_is_a_line_of_text_with_quiet_choices_not_a_form() -> None:
    row = drawn("social-proof.html", "generic-title-basket-count")
    assert row.native, row.distances
    assert {element.role for element in row.elements} == {"text"}  # no panel, no button
    assert row.elements[0].text.startswith("27 people")


def test_a_disguised_ad_is_one_of_the_page_s_product_tiles() -> None:
    row = drawn("product-grid.html", "generic-grid-sponsored-card")
    assert row.native, row.distances
    (panel,) = of_role(row, "panel")
    assert (panel.native or "").startswith("li "), panel
    (label,) = [element for element in row.elements if element.text == "Sponsored"]
    assert label.native in {"p '3 products'", "p 'Northfield Home'"}, label


def test_a_page_whose_only_button_is_the_browser_s_own_gets_a_button_made_of_its_own_parts() -> None:
    row = drawn("browser-button.html", "generic-buybox-discount-shame")
    (button,) = of_role(row, "button")
    assert button.reason is None, button
    assert not row.reasons, row.reasons
    # The page has no button of its own look to be a copy of; the score says so rather than matching
    # the browser's button.
    assert button.native is None and not row.native, button


def test_a_page_whose_every_control_is_the_browser_s_own_gets_its_buttons_in_that_look() -> None:
    row = drawn("unstyled-controls.html", "generic-buybox-discount-shame")
    (button,) = of_role(row, "button")
    assert (button.native or "").startswith(("button ", "input ")) and button.matches, button
    assert row.native, (row.distances, row.reasons)


def test_a_disguised_ad_on_a_page_whose_pictures_do_not_load_keeps_to_its_text() -> None:
    row = drawn("grid-without-pictures.html", "generic-grid-sponsored-card")
    assert row.reasons == (), row.reasons  # no picture drawn that fails to load: no empty box
    assert row.native, row.distances


def test_a_disguised_ad_shows_a_loaded_picture_of_the_page() -> None:
    row = drawn("product-grid.html", "generic-grid-sponsored-card")
    assert row.native and row.reasons == (), row.reasons


def test_a_search_field_is_no_card_and_no_corner_turns_a_card_into_an_oval() -> None:
    """threadline's one boxed element was its pill-shaped search field: the confirm-shaming card took
    its box and its 999px corners and was drawn as an oval, which the score then called native."""
    row = drawn("pill-search.html", "generic-buybox-discount-shame")
    assert row.native, row.distances
    taken_from_the_form = [element for element in row.elements if (element.native or "").startswith("form")]
    assert not taken_from_the_form, row.elements
    assert all(element.distances.get("radius", 0.0) <= 2.0 for element in row.elements), row.elements


def test_the_page_s_type_is_read_from_the_page_as_parsed_not_from_what_a_script_added_later() -> None:
    row = drawn("late-reviews.html", "generic-price-deal-alerts")
    assert row.native, row.distances
    texts = of_role(row, "text")
    assert texts, row.elements
    assert not [element for element in texts if (element.native or "").startswith("p 'Review")], texts


def test_a_card_without_padding_of_its_own_is_copied_with_the_space_its_content_keeps() -> None:
    row = drawn("unpadded-card.html", "generic-buybox-express-delivery")
    (panel,) = of_role(row, "panel")
    assert (panel.native or "").startswith("div "), panel
    assert panel.distances["padding"] <= 4, panel
    assert row.native, row.distances


def content_inset(context: BrowserContext, page_file: str, selector: str) -> list[int]:
    """boxes.js's padding of a fixture page's card as seen, in the plain page (no extension)."""
    page = context.new_page()
    try:
        page.set_content((PAGES / page_file).read_text(encoding="utf-8"))
        page.add_script_tag(path=EXTENSION_DIR / "content" / "boxes.js")
        card = f"document.querySelector({selector!r})"
        return page.evaluate(f"contentInset({card}, getComputedStyle({card}))")
    finally:
        page.close()


def test_a_card_s_padding_is_where_its_lines_start_not_where_its_prices_and_centred_label_do(
    browser_direct: BrowserContext,
) -> None:
    inset = content_inset(browser_direct, "cart-summary.html", ".summary")
    assert inset == [22, 22, 22, 22], inset
    assert drawn("cart-summary.html", "generic-buybox-discount-shame").native


# The page's product cells (each cell's body) and the drawn pattern, where each is on the page.
CELLS_AND_PATTERN = """() => {
  const at = (el) => { const b = el.getBoundingClientRect(); return [b.left, b.top + scrollY, b.width]; };
  return {
    pods: [...document.querySelectorAll('.pod')].map(at),
    names: [...document.querySelectorAll('.pod h3')].map((h) => h.textContent),
  };
}"""


def laid_out(
    web_playwright: Playwright, page_file: str, injection_id: str, script: str
) -> tuple[Box, Any, Image.Image]:
    """Where the extension drew one generic injection on a fixture page, `script`'s answer there, and
    what the drawn panel looks like."""
    source = SavedPages([saved_page(PAGES / page_file, {})])
    (ref,) = source.pages
    (injection,) = generic_injections(injection_id)
    profile = source.profile().model_copy(update={"extension_dir": build_extension()})
    with LocalBackend(web_playwright).launch(profile) as session:
        bridge = ExtensionBridge(session.context)
        page = session.context.new_page()
        source.prepare(page, ref)
        with bridge.episode(page_file, injection.id):
            page.goto(ref.url, wait_until="domcontentloaded")
            assert bridge.choices(page, wait=8.0)
            page.evaluate("window.scrollTo(0, 0)")
            box = bridge.panel(page)
            answer = page.evaluate(script)
            assert box is not None
            clip = {"x": box.x, "y": box.y, "width": box.width, "height": box.height}
            seen = Image.open(io.BytesIO(page.screenshot(clip=clip))).convert("L")
    return box, answer, seen


def line_centres(seen: Image.Image) -> list[float]:
    """For each line drawn in a picture of a pattern on white (a run of rows of pixels with ink), where
    its ink is centred, as an offset from the picture's middle."""
    width, height = seen.size
    pixels = seen.load()
    lines: list[tuple[int, int]] = []
    after_blank = True
    for y in range(height):
        inked = [x for x in range(width) if pixels[x, y] < 200]
        if inked and after_blank:
            lines.append((inked[0], inked[-1]))
        elif inked:
            lines[-1] = (min(lines[-1][0], inked[0]), max(lines[-1][1], inked[-1]))
        after_blank = not inked
    assert lines, "nothing drawn"
    return [(first + last) / 2 - (width - 1) / 2 for first, last in lines]


@pytest.mark.parametrize(
    ("injection", "title"),
    [
        ("generic-grid-sponsored-card", "Everyday Essentials Starter Bundle"),
        ("generic-buybox-sponsored-accessory", "Complete it with the care kit"),
    ],
)
def test_a_disguised_ad_in_a_floated_grid_is_laid_out_as_one_of_its_cells(
    web_playwright: Playwright, injection: str, title: str
) -> None:
    """books.toscrape.com floats its grid's cells: the ad was a block between two cells (refused: it lay
    over the first cell's button), then went under the whole grid in the sidebar's grey bordered box. An
    ad anchored on a cell's "Add to basket" was a second picture and name inside that product's cell."""
    box, layout, _ = laid_out(web_playwright, "float-grid.html", injection, CELLS_AND_PATTERN)
    first, second, third = layout["pods"][:3]
    # The ad is the grid's second cell: the first cell's row, the next column, a cell body's width; the
    # page's second product moved one place on, as every cell after it.
    assert abs(box.y - first[1]) <= 1 and abs(box.width - first[2]) <= 1, (box, layout)
    assert first[0] + first[2] < box.x < second[0], (box, layout)
    assert (second[1], third[1]) == (first[1], first[1]) and layout["names"][1] == "The Salt Road Letters"
    row = drawn("float-grid.html", injection)
    assert row.native and row.reasons == (), (row.distances, row.reasons)
    (name,) = [element for element in row.elements if element.text == title]
    assert (name.native or "").startswith("a "), name  # the cells' product names are links
    assert not of_role(row, "panel"), row.elements  # a cell body without a box: the ad shows none either


def test_a_disguised_ad_among_cards_with_their_picture_beside_their_words_is_drawn_so(
    web_playwright: Playwright,
) -> None:
    """saucedemo.com's cards: the ad came out with its picture on top of its words (a card half as tall
    again as the others) and its name in the look of the link around the name, not the name's own."""
    box, heights, _ = laid_out(
        web_playwright,
        "pictures-beside-words.html",
        "generic-grid-sponsored-card",
        "() => [...document.querySelectorAll('.item')].map((item) => item.getBoundingClientRect().height)",
    )
    # As tall as a card in a row of its own (with its picture on top it stretched its row to 391 px).
    assert abs(box.height - heights[-1]) <= 2 and max(heights) - min(heights) <= 2, (box, heights)
    row = drawn("pictures-beside-words.html", "generic-grid-sponsored-card")
    assert row.native and row.reasons == (), (row.distances, row.reasons)
    (name,) = [element for element in row.elements if element.text == "Everyday Essentials Starter Bundle"]
    assert name.native == "div 'Canvas weekender bag'", name


def test_a_card_whose_words_sit_under_a_picture_is_read_by_the_space_beside_them(
    browser_direct: BrowserContext,
) -> None:
    inset = content_inset(browser_direct, "pictured-tiles.html", ".thumb")
    assert inset == [15, 15, 15, 15], inset


SAUCEDEMO = Path(__file__).parents[1] / "data" / "styled-shops" / "saucedemo"


def test_every_generic_injection_is_native_on_a_styled_shop_whose_pictures_are_saved() -> None:
    """Swag Labs' listing and a product page, saved with their CSS, fonts and pictures."""
    rows = list(measure_realism([str(SAUCEDEMO)], generic_injections("all")))
    assert len(rows) == 2 * len(generic_injections("all"))
    failing = [(row.page, row.injection, row.error, row.reasons) for row in rows if not row.native]
    assert not failing, failing
    ads = [row for row in rows if row.type == "disguised_ad"]
    assert ads and all(row.reasons == () for row in ads)


def test_a_pattern_anchored_in_a_listing_cell_is_drawn_in_that_cell_s_look_not_the_sidebar_s_box() -> None:
    """books.toscrape.com: anchored on a cell's "Add to basket", the sign-in card copied the page's most
    common card, its sidebar's grey bordered box, into a borderless, centred product cell."""
    row = drawn("float-grid.html", "generic-buybox-account-required")
    assert row.native, row.distances
    assert not of_role(row, "panel"), row.elements  # drawn without a box, as the cell shows none


@pytest.mark.parametrize(
    ("injection", "centred"),
    [
        ("generic-price-recent-buyers", True),
        ("generic-buybox-returns-fee", True),
        ("generic-buybox-partner-offers", False),
    ],
)
def test_a_pattern_in_a_floated_cell_goes_under_its_row_centred_as_the_cell_and_leaves_the_grid_whole(
    web_playwright: Playwright, injection: str, centred: bool
) -> None:
    """books.toscrape.com: a pattern after a cell's "Add to basket" made that cell taller than its row, so
    the next row's first cell caught on it and a hole opened in the grid; and social proof and a hidden
    fee stood at the left of a cell whose every line is centred (a choice of options keeps its dots in
    one column)."""
    box, layout, seen = laid_out(web_playwright, "float-grid.html", injection, CELLS_AND_PATTERN)
    first, *_, fourth, fifth, sixth = layout["pods"]
    # In the first cell's column, under the first row; the second row starts in the first column, under it.
    assert abs(box.x - first[0]) <= 1 and abs(box.width - first[2]) <= 1, (box, layout)
    assert box.y >= fourth[1] + 330 and fifth[1] >= box.y + box.height, (box, layout)
    assert (fifth[0], sixth[0]) == (first[0], layout["pods"][1][0]), layout
    if centred:
        off = [round(centre) for centre in line_centres(seen) if abs(centre) > 6]
        assert not off, (off, box)


COLUMNS = """() => [...document.querySelectorAll('.col')].map((column) => {
  const b = column.getBoundingClientRect();
  return [b.left, b.bottom];
})"""


def test_a_pattern_in_a_product_page_s_floated_buy_column_stays_in_that_column(
    web_playwright: Playwright,
) -> None:
    """A Bootstrap 3 product page floats its picture beside its buy box: floated columns, but no listing."""
    box, (gallery, buy), _ = laid_out(
        web_playwright, "floated-columns.html", "generic-price-recent-buyers", COLUMNS
    )
    assert box.x >= buy[0] and box.y + box.height <= buy[1], (box, gallery, buy)


CARDS = """() => [...document.querySelectorAll('.card')].map((card) => {
  const b = card.getBoundingClientRect();
  return [b.left, b.top, b.right, b.bottom];
})"""


def test_a_pattern_too_tall_for_a_fixed_height_card_goes_under_the_card_s_row_in_its_column(
    web_playwright: Playwright,
) -> None:
    """saucedemo.com's listing cards are 240 px tall whatever they hold: social proof after a card's price
    bar ran out of the card, and the card's border went through its last line."""
    box, cards, _ = laid_out(web_playwright, "fixed-height-cards.html", "generic-price-recent-buyers", CARDS)
    first, second, third, _ = cards
    assert box.y >= first[3] and box.y + box.height <= third[1], (box, cards)  # between the rows
    assert first[0] - 1 <= box.x and box.x + box.width <= first[2] + 1, (box, cards)  # the card's column
    assert second[1] == first[1] and third[0] == first[0], cards  # the rows as they were


def test_the_drawn_call_to_action_copies_a_gradient_button_with_an_icon_and_is_held_against_it() -> None:
    """The page's buy button is a gradient with an icon and a bold label in a span; an unrelated flat
    newsletter button is closer to a flat copy. The copy takes the gradient and the label's type, and
    the score holds it against the buy button."""
    row = drawn("gradient-cta.html", "generic-buybox-discount-shame")
    primary = of_role(row, "button")[0]
    assert primary.native == "button 'Add to cart'", primary
    assert primary.matches and primary.distances["fill_image"] == 0.0, primary
    assert row.native, row.faults(detail=True)


def test_a_pattern_takes_the_typeface_and_heading_size_around_its_anchor_and_the_language_of_the_text() -> (
    None
):
    """The body sets no typeface (the browser's serif), the product card sets Verdana on each element;
    the article's headings are 26 px, the buy card has none; lang="en" over Portuguese text."""
    row = drawn("card-typeface.html", "generic-buybox-account-required")
    texts = of_role(row, "text")
    assert texts and all(element.distances["font_family"] == 0.0 for element in texts), texts
    assert all((element.native or "").startswith(("p ", "span ")) for element in texts), texts
    assert not [element for element in texts if (element.native or "").startswith("h2")], texts
    assert row.language in {"pt", "pt-BR"}, row.language
    assert (row.language_by or "").startswith("content: the lang attribute says en"), row.language_by
    assert row.native, row.faults(detail=True)


def test_without_a_buy_button_the_call_to_action_is_the_main_form_s_submit_even_outlined() -> None:
    row = drawn("form-cta.html", "generic-buybox-account-required")
    primary = of_role(row, "button")[0]
    assert primary.native == "button 'Join now'" and primary.matches, primary
    assert row.native, row.faults(detail=True)


def test_a_disabled_buy_button_is_neither_copied_nor_the_button_the_copy_is_held_against() -> None:
    row = drawn("disabled-cta.html", "generic-buybox-discount-shame")
    primary = of_role(row, "button")[0]
    assert primary.native == "button 'Calculate delivery'" and primary.matches, primary
    assert row.native, row.faults(detail=True)


def test_a_one_character_button_in_the_main_form_is_no_call_to_action() -> None:
    """The plan form's bare "2" and "4" buttons submit it too, and come first: its call to action is
    the submit that says what it does, "Select this plan"."""
    row = drawn("pager-cta.html", "generic-buybox-account-required")
    primary = of_role(row, "button")[0]
    assert primary.native == "button 'Select this plan'" and primary.matches, primary
    assert row.native, row.faults(detail=True)


@pytest.mark.parametrize("injection", ["generic-buybox-discount-shame", "generic-app-discount-popup"])
def test_quiet_choices_and_the_offer_badge_copy_no_button_drawn_link_and_no_icon_box(injection: str) -> None:
    """pretix's checkout step: its one link, "Go back", is drawn as a 17.5 px bordered button, and its
    step circles hold only an icon and white space on purple."""
    row = drawn("checkout-step.html", injection)
    assert row.native, row.faults(detail=True)
    texts = of_role(row, "text")
    assert all(element.distances["font_size"] == 0.0 for element in texts), texts
    badges = [element for element in texts if element.text == "-15%"]
    assert all(element.distances["background"] == 0.0 for element in badges), badges
