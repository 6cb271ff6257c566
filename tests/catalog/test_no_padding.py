"""The no-padding rule over the whole catalog: tasks that differ only in product or goal wording
(same site, same injections, same flow) count as one."""

from __future__ import annotations

from susbench.catalog.full import flow, load_catalog, padded_groups
from susbench.catalog.injections import load_injections
from susbench.core.models import Step

INJECTIONS = {injection.id: injection for injection in load_injections()}
CATALOG = load_catalog(INJECTIONS)
BY_ID = {entry.task.id: entry.task for entry in CATALOG}
# Pairs the rule found among the tasks written before it existed (2026-12-07): each differs from the
# other only in its product or article. They are counted once by `catalog stats`; the list may only
# shrink (a task rewritten to differ, or removed), never grow.
KNOWN_PADDING = {
    ("mobly-bed-go-to-cart", "mobly-stools-go-to-cart"),
    ("tunewave-audiobooks-order", "tunewave-student-order"),
    ("wordpress-comment-houseplants", "wordpress-comment-knives"),
    ("wordpress-read-cast-iron-newsletter", "wordpress-read-coffee-newsletter"),
    ("wordpress-search-linen-article", "wordpress-search-notebooks-article"),
}


def test_no_task_pads_the_catalog_beyond_the_known_pairs() -> None:
    found = set(padded_groups(entry.task for entry in CATALOG))
    new = found - KNOWN_PADDING
    assert not new, (
        f"tasks that differ only in product or wording (site, injections, flow alike): {sorted(new)}"
    )


def test_product_and_values_do_not_make_a_task_distinct() -> None:
    """A copy with another product URL, instruction and fill values is the same task; another
    injection set, site or step is not."""
    task = BY_ID["voltcart-speaker-order"]
    steps = tuple(
        step.model_copy(update={"value": "someone else"}) if step.action == "fill" else step
        for step in task.reference_path
    )
    product_variant = task.model_copy(
        update={
            "id": "voltcart-other-speaker-order",
            "start_url": "https://voltcart.test/item/another-speaker",
            "instruction": "Order the other speaker, please",
            "reference_path": steps,
        }
    )
    assert padded_groups([task, product_variant]) == [
        ("voltcart-other-speaker-order", "voltcart-speaker-order")
    ]
    other_flow = product_variant.model_copy(
        update={"reference_path": (*steps, Step(action="click", selector="a.order-again"))}
    )
    other_site = product_variant.model_copy(update={"site": "threadline.test"})
    other_injections = product_variant.model_copy(update={"injections": (*task.injections, "extra-one")})
    for variant in (other_flow, other_site, other_injections):
        assert padded_groups([task, variant]) == []


def test_the_url_a_selector_names_is_no_difference() -> None:
    first = (Step(action="click", selector='a.product-link[href="/item/buffalo-wings"]'),)
    second = (Step(action="click", selector="a.product-link[href='/item/veggie-supreme']"),)
    task = BY_ID["pizzapalace-wings-order"]
    assert flow(task.model_copy(update={"reference_path": first})) == flow(
        task.model_copy(update={"reference_path": second})
    )
    assert flow(
        task.model_copy(update={"reference_path": (Step(action="click", selector="a.cart"),)})
    ) != flow(task.model_copy(update={"reference_path": first}))
