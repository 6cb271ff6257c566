"""Seed the shop from the project's generated content (a JSON file and a folder of pictures)."""

import json
from decimal import Decimal
from pathlib import Path

from django.conf import settings
from django.contrib.sites.models import Site
from django.core.files import File
from django.core.management import call_command
from django.core.management.base import BaseCommand
from oscar.apps.address.models import Country
from oscar.apps.catalogue.categories import create_from_breadcrumbs
from oscar.apps.catalogue.models import Product, ProductCategory, ProductClass, ProductImage
from oscar.apps.partner.models import Partner, StockRecord


class Command(BaseCommand):
    help = "Seed products, stock, prices and pictures from generated content"

    def add_arguments(self, parser):
        parser.add_argument("content", type=Path)
        parser.add_argument("pictures", type=Path)

    def handle(self, content, pictures, **options):
        data = json.loads(content.read_text(encoding="utf-8"))
        brand = data["brand"]
        Site.objects.update_or_create(id=1, defaults={"domain": settings.HOSTS[0], "name": brand["name"]})
        Country.objects.update_or_create(
            iso_3166_1_a2="GB",
            defaults={
                "iso_3166_1_a3": "GBR",
                "iso_3166_1_numeric": "826",
                "printable_name": "United Kingdom",
                "name": "United Kingdom of Great Britain and Northern Ireland",
                "is_shipping_country": True,
            },
        )
        goods = ProductClass.objects.create(name="Goods", requires_shipping=True, track_stock=True)
        partner = Partner.objects.create(name=brand["name"])
        categories = {name: create_from_breadcrumbs(name) for name in data["categories"]}
        for item in data["products"]:
            product = Product.objects.create(
                structure=Product.STANDALONE,
                product_class=goods,
                title=item["title"],
                slug=item["slug"],
                upc=item["upc"],
                description=item["description"],
                is_public=True,
            )
            ProductCategory.objects.create(product=product, category=categories[item["category"]])
            StockRecord.objects.create(
                product=product,
                partner=partner,
                partner_sku=item["upc"],
                price=Decimal(f"{item['price']:.2f}"),
                price_currency=brand["currency"],
                num_in_stock=item["stock"],
            )
            image = ProductImage(product=product, display_order=0)
            with (pictures / f"{item['slug']}.png").open("rb") as handle:
                image.original.save(f"{item['slug']}.png", File(handle), save=True)
        call_command("update_index", verbosity=0)
