"""Print pretix's trips as the project's canonical strings (JSON), read from its database:
trip:<slug> -> name|adult price|seats|departure date."""

import json

import django

django.setup()

from django_scopes import scopes_disabled  # noqa: E402
from pretix.base.models import Event  # noqa: E402

with scopes_disabled():
    items = {}
    for event in Event.objects.order_by("slug"):
        adult = event.items.get(name="Adult")
        seats = event.quotas.get(name="Seats")
        items[f"trip:{event.slug}"] = (
            f"{event.name}|{adult.default_price:.2f}|{seats.size}|{event.date_from.date().isoformat()}"
        )
    print(json.dumps(items, sort_keys=True))
