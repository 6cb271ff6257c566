"""Static assets rendered per site: stylesheet, script, brand font and generated SVG images.

Images are drawn in code from the product's slug and the seed (no image files ship). Fonts are the
TTFs Debian installs (fonts-dejavu-core, fonts-liberation): no font bytes are copied into the repo;
if none of a brand's candidates is installed the font URL answers 404 and CSS falls back.
"""

from __future__ import annotations

import colorsys
import hashlib
from functools import cache
from importlib import resources
from pathlib import Path

import yaml

from susbench.core.loading import SAFE_LOADER
from susbench.web.catalog import Product, SiteSpec
from susbench.web.edition import Edition

FONT_DIRS = (Path("/usr/share/fonts/truetype"), Path("/usr/share/fonts/TTF"))


@cache
def _package_text(name: str) -> str:
    return resources.files("susbench.web").joinpath(name).read_text(encoding="utf-8")


def stylesheet(spec: SiteSpec) -> str:
    """Brand variables followed by the shared stylesheet."""
    c = spec.colors
    radius = {"fashion": "2px", "news": "2px", "saas": "10px", "food_ordering": "14px"}.get(
        spec.category, "8px"
    )
    look = spec.look
    if look.radius is not None:
        radius = f"{look.radius}px"
    return (
        "@font-face{font-family:"
        + f'"{spec.font.family}"'
        + ';src:url("/static/fonts/brand.ttf") format("truetype");font-display:swap}\n'
        f":root{{--primary:{c.primary};--accent:{c.accent};--dark:{c.dark};--light:{c.light};"
        f"--radius:{radius};--text:{look.text_size}px;--width:{look.width}px;"
        f'--font:"{spec.font.family}",{spec.font.fallback}}}\n' + _package_text("site.css")
    )


def script() -> str:
    return _package_text("app.js")


@cache
def font_bytes(spec: SiteSpec) -> bytes | None:
    """The first installed candidate TTF of the brand, or None."""
    for relative in spec.font.files:
        for base in FONT_DIRS:
            path = base / relative
            if path.is_file():
                return path.read_bytes()
    return None


def _hue(key: str) -> float:
    return hashlib.sha256(key.encode()).digest()[0] / 255


def _hsl(h: float, s: float, lightness: float) -> str:
    r, g, b = colorsys.hls_to_rgb(h % 1.0, lightness, s)
    return f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"


@cache
def shapes() -> dict[str, str]:
    """SVG fragments per product shape (shapes.yaml), formatted with the product's colours."""
    data: dict[str, str] = yaml.load(_package_text("shapes.yaml"), Loader=SAFE_LOADER)
    return data


def _windows() -> str:
    return "".join(
        f'<rect x="{130 + col * 40}" y="{90 + row * 34}" width="22" height="20"/>'
        for row in range(4)
        for col in range(4)
    )


def product_svg(edition: Edition, product: Product, view: int = 1) -> str:
    """A product illustration: brand-tinted backdrop plus a shape drawing, stable per seed."""
    colors = edition.spec.colors
    hue = _hue(f"{edition.seed}:{product.slug}:{view}")
    main = _hsl(hue, 0.55, 0.55)
    backdrop = _hsl(hue + 0.5, 0.35, 0.93)
    drawing = (
        shapes()
        .get(product.shape, shapes()["spark"])
        .format(
            m=main,
            a=colors.accent,
            d=colors.dark,
            b=colors.light,
            sky=_hsl(0.57, 0.6, 0.82),
            windows=_windows(),
            holes="".join(
                f'<rect x="{x}" y="40" width="14" height="10"/><rect x="{x}" y="250" width="14" height="10"/>'
                for x in range(90, 320, 30)
            ),
            pins="".join(f'<path d="M{x} 80v-20M{x} 220v20"/>' for x in range(155, 260, 20)),
        )
    )
    scale = {
        1: "",
        2: ' transform="translate(200 150) scale(1.3) translate(-200 -150)"',
        3: ' transform="rotate(-8 200 150)"',
    }
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 400 300" width="400" height="300" '
        f'role="img" aria-label="{product.name.replace("&", "and").replace(chr(34), "")}">'
        f'<rect width="400" height="300" fill="{backdrop}"/>'
        '<ellipse cx="200" cy="262" rx="130" ry="14" fill="#000" opacity=".07"/>'
        f"<g{scale.get(view, '')}>{drawing}</g></svg>"
    )


def hero_svg(edition: Edition) -> str:
    """The home page's hero artwork; its composition changes with the month."""
    c = edition.spec.colors
    products = edition.products()[:3]
    month = edition.date.month
    blobs = "".join(
        f'<circle cx="{90 + i * 140 + (month * 13) % 40}" cy="{110 + ((month + i) * 37) % 140}" '
        f'r="{40 + ((month * (i + 2)) % 30)}" fill="{col}" opacity=".25"/>'
        for i, col in enumerate((c.primary, c.accent, c.primary, c.accent))
    )
    tiles = "".join(
        f'<g transform="translate({40 + i * 190} {70 + (i % 2) * 40}) scale(0.42)">'
        f'<rect width="400" height="300" rx="24" fill="#fff"/>'
        f"{_inner(product_svg(edition, product))}</g>"
        for i, product in enumerate(products)
    )
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 640 360" width="640" height="360">'
        f'<rect width="640" height="360" fill="{c.light}"/>{blobs}{tiles}</svg>'
    )


def _inner(svg: str) -> str:
    return svg[svg.index(">") + 1 : svg.rindex("</svg>")]


def favicon(spec: SiteSpec) -> str:
    initial = spec.name.replace("The ", "")[0]
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">'
        f'<rect width="32" height="32" rx="8" fill="{spec.colors.primary}"/>'
        f'<text x="16" y="23" text-anchor="middle" font-size="20" font-family="sans-serif" '
        f'font-weight="700" fill="{spec.colors.light}">{initial}</text></svg>'
    )
