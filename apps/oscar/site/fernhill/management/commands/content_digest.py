"""Print the shop's content as the project's canonical strings (JSON), read from the database."""

import json

from django.core.management.base import BaseCommand
from oscar.apps.catalogue.models import Product


class Command(BaseCommand):
    help = "Print product:<slug> -> title|price|stock for every product, as JSON"

    def handle(self, **options):
        items = {}
        for product in Product.objects.order_by("slug").prefetch_related("stockrecords"):
            record = product.stockrecords.first()
            price = f"{record.price:.2f}" if record else "none"
            stock = record.num_in_stock if record else "none"
            items[f"product:{product.slug}"] = f"{product.title}|{price}|{stock}"
        self.stdout.write(json.dumps(items, sort_keys=True))
