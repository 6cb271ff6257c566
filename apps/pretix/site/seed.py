"""Seed pretix from the project's generated content: the organizer Fernhill and one event per trip,
with adult and child tickets, add-on extras and a seat quota (run by the app's own Python with
PRETIX_CONFIG_FILE set: `python seed.py CONTENT.json`)."""

import datetime as dt
import json
import sys
from decimal import Decimal
from pathlib import Path

import django

django.setup()

from django.utils.timezone import make_aware  # noqa: E402
from django_scopes import scopes_disabled  # noqa: E402
from pretix.base.models import Event, Item, ItemAddOn, ItemCategory, Organizer, Quota  # noqa: E402

ORGANIZER = "fernhill"
EXTRAS = (("Cancellation cover", Decimal("4.50")), ("Packed lunch", Decimal("8.00")))


def seed(content: dict) -> None:
    brand = content["brand"]
    organizer = Organizer.objects.create(
        slug=ORGANIZER, name=brand["name"], plugins="pretix.plugins.banktransfer"
    )  # bank transfer is an organizer-and-event plugin: enabled on both
    organizer.settings.set("organizer_info_text", brand["tagline"])
    for trip in content["trips"]:
        departs = dt.date.fromisoformat(trip["departs"])
        event = Event.objects.create(
            organizer=organizer,
            slug=trip["slug"],
            name=trip["name"],
            date_from=make_aware(dt.datetime.combine(departs, dt.time(9, 30))),
            currency=brand["currency"],
            live=True,
            plugins="pretix.plugins.banktransfer",
        )
        settings = event.settings
        settings.set("frontpage_text", trip["description"])
        settings.set("payment_banktransfer__enabled", True)
        settings.set("payment_banktransfer_bank_details_type", "other")
        settings.set("payment_banktransfer_bank_details", f"{brand['name']}, account 00-00-00 12345678")
        settings.set("attendee_names_asked", False)
        settings.set("show_quota_left", True)
        settings.set("mail_send_order_placed", False)
        tickets = ItemCategory.objects.create(event=event, name="Tickets", position=0)
        extras = ItemCategory.objects.create(event=event, name="Extras", position=1, is_addon=True)
        price = Decimal(f"{trip['price']:.2f}")
        adult = Item.objects.create(
            event=event, category=tickets, name="Adult", default_price=price, admission=True, position=0
        )
        child = Item.objects.create(
            event=event,
            category=tickets,
            name="Child (5-15)",
            default_price=(price / 2).quantize(Decimal("0.01")),
            admission=True,
            position=1,
        )
        extra_items = [
            Item.objects.create(
                event=event, category=extras, name=name, default_price=cost, admission=False, position=index
            )
            for index, (name, cost) in enumerate(EXTRAS)
        ]
        for base in (adult, child):
            ItemAddOn.objects.create(base_item=base, addon_category=extras, min_count=0, max_count=2)
        seats = Quota.objects.create(event=event, name="Seats", size=trip["seats"])
        seats.items.add(adult, child)
        unlimited = Quota.objects.create(event=event, name="Extras", size=None)
        unlimited.items.add(*extra_items)


if __name__ == "__main__":
    with scopes_disabled():
        seed(json.loads(Path(sys.argv[1]).read_text(encoding="utf-8")))
