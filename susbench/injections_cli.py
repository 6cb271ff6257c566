"""`susbench injections validate|list|preview` and `susbench extension build`."""

from __future__ import annotations

import html
import json
import time
from collections import Counter
from pathlib import Path
from typing import Annotated
from urllib.parse import urlsplit

import typer
from playwright.sync_api import Page
from rich.console import Console
from rich.table import Table

from susbench.browser import BrowserProfile, LocalBackend
from susbench.errors import SusbenchError
from susbench.extension_bridge import ExtensionBridge
from susbench.injection_catalog import build_extension, load_injections, load_templates
from susbench.models import PATTERN_TYPES, Injection
from susbench.paths import cache_dir

injections_app = typer.Typer(no_args_is_help=True)
extension_app = typer.Typer(no_args_is_help=True)

PREVIEW_DATE = "2026-11-29"
TYPE_TITLES = {name: name.replace("_", " ").title() for name in PATTERN_TYPES} | {"popup_ad": "Pop-Up Ad"}


@injections_app.command(
    "validate", help="Validate injection files (default: the whole catalog) and templates."
)
def validate(paths: Annotated[list[Path] | None, typer.Argument(help="files or folders")] = None) -> None:
    injections = load_injections(paths or ())
    load_templates()
    counts = Counter(item.type for item in injections)
    summary = ", ".join(f"{name} {counts[name]}" for name in PATTERN_TYPES if counts[name])
    typer.echo(f"{len(injections)} injections valid ({summary})")


@injections_app.command("list", help="List injections; --json prints one object per line.")
def list_injections(as_json: Annotated[bool, typer.Option("--json", help="JSON lines")] = False) -> None:
    injections = load_injections()
    if as_json:
        for item in injections:
            page = item.page.model_dump(mode="json", exclude_none=True)
            typer.echo(json.dumps({"id": item.id, "type": item.type, "site": item.site, "page": page}))
        return
    table = Table("id", "type", "site", "page")
    for item in injections:
        table.add_row(item.id, item.type, item.site, item.page.url)
    Console().print(table)


@extension_app.command("build", help="Build the MV3 extension with its injection store; prints its folder.")
def build(
    out: Annotated[
        Path | None, typer.Option("--out", help="folder (default: content-addressed in the cache)")
    ] = None,
) -> None:
    typer.echo(str(build_extension(load_injections(), out)))


def fill_cart(page: Page, host: str) -> None:
    """Put the site's first item into the cart, so /cart and /checkout show their real content."""
    from susbench.web.catalog import specs

    spec = specs()[host]
    product = next((item for item in spec.products if item.price > 0), spec.products[0])
    page.goto(f"https://{host}/{spec.detail}/{product.slug}")
    page.locator("form.add-to-cart [type=submit]").first.click()
    page.wait_for_load_state()


def open_example(page: Page, injection: Injection, prepared: bool = False) -> None:
    """Open the injection's example page (filling the cart first where the page needs one)."""
    url = injection.page.example or f"https://{injection.site}/"
    if not prepared and urlsplit(url).path in ("/cart", "/checkout"):
        fill_cart(page, injection.site)
    page.goto(url)


def _shoot(page: Page, bridge: ExtensionBridge, injection: Injection, target: Path) -> None:
    if not bridge.choices(page, wait=6.0):
        raise SusbenchError(f"{injection.id}: nothing was injected on {page.url}")
    page.evaluate("document.fonts.ready")
    time.sleep(0.35)
    viewport = page.viewport_size or {"width": 1280, "height": 800}
    if injection.placement == "overlay":
        page.screenshot(path=str(target))
        return
    box = bridge.panel(page, scroll=True)
    if box is None:
        raise SusbenchError(f"{injection.id}: the pattern disappeared on {page.url}")
    left, top = max(0.0, box.x - 220), max(0.0, box.y - 150)
    right = min(float(viewport["width"]), box.x + box.width + 220)
    bottom = min(float(viewport["height"]), box.y + box.height + 150)
    page.screenshot(
        path=str(target), clip={"x": left, "y": top, "width": right - left, "height": bottom - top}
    )


def _gallery(out: Path, shots: list[tuple[Injection, str]]) -> Path:
    sections = []
    for pattern_type in PATTERN_TYPES:
        figures = [
            f'<figure><img src="{html.escape(name)}" alt="{html.escape(item.id)}" loading="lazy">'
            f"<figcaption><b>{html.escape(item.id)}</b><br>{html.escape(item.site)} · "
            f"<code>{html.escape(item.page.url)}</code><br>{html.escape(item.description)}</figcaption></figure>"
            for item, name in shots
            if item.type == pattern_type
        ]
        if figures:
            sections.append(f"<section><h2>{TYPE_TITLES[pattern_type]}</h2>{''.join(figures)}</section>")
    style = (
        "body{font:15px system-ui,sans-serif;margin:24px;background:#f6f6f6}h2{margin:32px 0 12px}"
        "section{display:grid;grid-template-columns:repeat(auto-fill,minmax(420px,1fr));gap:16px}"
        "section h2{grid-column:1/-1}figure{margin:0;background:#fff;border:1px solid #ddd;border-radius:8px;"
        "padding:10px}figure img{width:100%;border:1px solid #eee}figcaption{font-size:13px;color:#444}"
    )
    index = out / "index.html"
    index.write_text(
        f"<!doctype html><meta charset=utf-8><title>Injection gallery</title><style>{style}</style>"
        f"<h1>Injection gallery ({len(shots)} injections, local web {PREVIEW_DATE})</h1>{''.join(sections)}",
        encoding="utf-8",
    )
    return index


@injections_app.command(
    "preview", help="Screenshot every injection in place on the local web; writes a gallery."
)
def preview(
    out: Annotated[
        Path | None, typer.Option("--out", help="gallery folder (default: <cache>/gallery)")
    ] = None,
    only: Annotated[list[str] | None, typer.Option("--id", help="only these injection ids")] = None,
    date: Annotated[
        str, typer.Option(help="local web date (sites redesign after their drift date)")
    ] = PREVIEW_DATE,
) -> None:
    from susbench.web import LocalWeb

    injections = [item for item in load_injections() if not only or item.id in only]
    target = out or cache_dir() / "gallery"
    target.mkdir(parents=True, exist_ok=True)
    extension = build_extension(load_injections())
    shots: list[tuple[Injection, str]] = []
    with LocalWeb(port=0, date=date, seed=0) as web:
        profile = BrowserProfile(
            host_resolver_rules=f"MAP *.test {web.loopback}:{web.port}",
            spki_pins=(web.spki,),
            extension_dir=extension,
        )
        with LocalBackend().launch(profile) as session:
            bridge = ExtensionBridge(session.context)
            for item in injections:
                page = session.context.new_page()
                needs_cart = urlsplit(item.page.example or "").path in ("/cart", "/checkout")
                if needs_cart:
                    fill_cart(page, item.site)
                bridge.start_episode(f"preview-{item.id}", item.id)
                open_example(page, item, prepared=needs_cart)
                name = f"{item.type}--{item.id}.png"
                _shoot(page, bridge, item, target / name)
                bridge.finish()
                page.close()
                shots.append((item, name))
                typer.echo(f"{item.type:20} {item.id}")
    typer.echo(str(_gallery(target, shots)))
