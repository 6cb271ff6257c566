"""A screenshot of every injection in place on the local web, and a gallery page of them; generic
injections also on real pages replayed from a snapshot (the realism review)."""

from __future__ import annotations

import html
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from playwright.sync_api import Page

from susbench.browser import LocalBackend, replay_profile, routed_profile
from susbench.browser.bridge import ExtensionBridge
from susbench.catalog.injections import build_extension
from susbench.core.errors import SusbenchError
from susbench.core.models import PATTERN_TYPES, Injection
from susbench.core.tables import counted
from susbench.replayer.factory import replay_server
from susbench.web import LocalWeb
from susbench.web.edition import DEFAULT_DATE
from susbench.web.flows import fill_cart, needs_cart, open_example

TYPE_TITLES = {name: name.replace("_", " ").title() for name in PATTERN_TYPES} | {"popup_ad": "Pop-Up Ad"}
MARGIN_X, MARGIN_Y = 220, 150


def shoot_in_place(page: Page, bridge: ExtensionBridge, injection: Injection, target: Path) -> None:
    """Screenshot the injected pattern with a margin of its page around it (pop-ups: the viewport)."""
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
    left, top = max(0.0, box.x - MARGIN_X), max(0.0, box.y - MARGIN_Y)
    right = min(float(viewport["width"]), box.x + box.width + MARGIN_X)
    bottom = min(float(viewport["height"]), box.y + box.height + MARGIN_Y)
    page.screenshot(
        path=str(target), clip={"x": left, "y": top, "width": right - left, "height": bottom - top}
    )


def _gallery(out: Path, shots: list[tuple[Injection, str]], date: str, where: str = "") -> Path:
    sections = []
    for pattern_type in PATTERN_TYPES:
        figures = [
            f'<figure><img src="{html.escape(name)}" alt="{html.escape(item.id)}" loading="lazy">'
            f"<figcaption><b>{html.escape(item.id)}</b><br>{html.escape(where or item.site)} · "
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
        f"<h1>Injection gallery ({counted(len(shots), 'picture')}, "
        f"{html.escape(where or 'local web')} {date})</h1>"
        f"{''.join(sections)}",
        encoding="utf-8",
    )
    return index


def preview_gallery(
    shown: Sequence[Injection],
    catalog: Sequence[Injection],
    out: Path,
    date: str = DEFAULT_DATE.isoformat(),
    on_shot: Callable[[Injection], None] = lambda injection: None,
) -> Path:
    """Screenshot each of `shown` with the extension built from `catalog`; returns the gallery page."""
    out.mkdir(parents=True, exist_ok=True)
    extension = build_extension(catalog)
    shots: list[tuple[Injection, str]] = []
    with (
        LocalWeb(port=0, date=date, seed=0) as web,
        LocalBackend().launch(routed_profile(web, extension_dir=extension)) as session,
    ):
        bridge = ExtensionBridge(session.context)
        for item in shown:
            page = session.context.new_page()
            prepared = needs_cart(item)
            if prepared:
                fill_cart(page, item.site)
            with bridge.episode(f"preview-{item.id}", item.id):
                open_example(page, item, prepared=prepared)
                name = f"{item.type}--{item.id}.png"
                shoot_in_place(page, bridge, item, out / name)
            page.close()
            shots.append((item, name))
            on_shot(item)
    return _gallery(out, shots, date)


def preview_real_pages(
    shown: Sequence[Injection],
    catalog: Sequence[Injection],
    snapshot: Path,
    urls: Sequence[str],
    out: Path,
    on_shot: Callable[[Injection], None] = lambda injection: None,
) -> list[Path]:
    """Each generic injection of `shown` on each of `urls`, replayed offline from `snapshot` with the
    extension built from `catalog`; one gallery page per URL (`real-N/index.html`)."""
    extension = build_extension(catalog)
    galleries = []
    with replay_server(snapshot, "direct") as server:
        profile = replay_profile(server).model_copy(update={"extension_dir": extension})
        with LocalBackend().launch(profile) as session:
            bridge = ExtensionBridge(session.context)
            for number, url in enumerate(urls, start=1):
                folder = out / f"real-{number}"
                folder.mkdir(parents=True, exist_ok=True)
                shots: list[tuple[Injection, str]] = []
                for item in shown:
                    server.new_episode()
                    page = session.context.new_page()
                    with bridge.episode(f"preview-{number}-{item.id}", item.id):
                        page.goto(url, wait_until="domcontentloaded")
                        name = f"{item.type}--{item.id}.png"
                        shoot_in_place(page, bridge, item, folder / name)
                    page.close()
                    shots.append((item, name))
                    on_shot(item)
                galleries.append(_gallery(folder, shots, "", where=url))
    return galleries
