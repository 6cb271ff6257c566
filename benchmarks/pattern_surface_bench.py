"""Where to draw a pattern the page cannot intercept, and what watching it costs (a benchmark, not a test).

1. Drawing surface, side by side in one browser session each: the pattern drawn in a closed shadow root
   (what the extension does) against the same pattern drawn in an extension-origin frame inside a
   closed shadow root (the alternative of issue 16). Two minimal prototype extensions, identical but
   for the surface, draw the preselection template above the Add to cart button of a local-web item
   page; we time navigation start -> pattern painted (median of --loads page loads) and count the
   browser's processes and their resident memory after the loads.
2. Watching cost: main-thread task and script time of the page's renderer (CDP Performance metrics)
   over --idle-s seconds with the pattern in view, for the extension as of --before (one-shot
   IntersectionObserver) and as now (IntersectionObserver v2 plus a 100 ms hit-testing look).

    .venv/bin/python -m benchmarks.pattern_surface_bench [--loads 15] [--idle-s 5] [--before 337f432]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import BrowserContext, Playwright, sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.fixtures

from susbench.browser import LocalBackend, routed_profile
from susbench.browser.bridge import ExtensionBridge
from susbench.catalog.injections import build_extension, load_injections, load_templates
from susbench.web import LocalWeb
from tests.support.extension import build_extension_at

PAGE = "https://voltcart.test/item/aero-14-laptop"
INJECTION = "voltcart-item-protection-plan"
LOOK = (
    "[data-part=frame]{--font:sans-serif;--size:16px;--line:1.5;--text:#222;--heading:#111;"
    "--border:1px solid #ccc;--radius:8px;--surface:#fff;--width:360px;--primary-bg:#0a6}"
)
REPORT = "chrome.runtime.sendMessage({ kind: 'drawn', at: Date.now() });"
PAINTED = f"requestAnimationFrame(() => setTimeout(() => {{ {REPORT} }}, 0));"
# The page's own navigation start, and the drawing itself, for each surface.
CONTENT = """
chrome.runtime.sendMessage({ kind: "origin", at: performance.timeOrigin });
const anchor = document.querySelector("form.add-to-cart button.add-to-cart-btn");
const host = document.createElement("div");
const root = host.attachShadow({ mode: "closed" });
DRAW
anchor.before(host);
"""
DRAW_SHADOW = "root.innerHTML = PATTERN;\n" + PAINTED
DRAW_FRAME = (
    'root.innerHTML = `<iframe src="${chrome.runtime.getURL("frame.html")}" '
    'style="border:0;width:360px;height:120px"></iframe>`;'
)
WORKER = "self.log = []; chrome.runtime.onMessage.addListener((message) => { self.log.push(message); });"


def pattern_html() -> str:
    injection = next(item for item in load_injections() if item.id == INJECTION)
    template = load_templates()[injection.type]
    html = template.html
    for key, text in injection.texts.items():
        html = html.replace("{{" + key + "}}", text)
    return f"<style>{LOOK}\n{template.css}</style>{html}"


def prototype(out: Path, surface: str) -> Path:
    """A minimal extension drawing the pattern on one surface: "shadow" or "frame"."""
    out.mkdir(parents=True)
    pattern = pattern_html()
    manifest = {
        "manifest_version": 3,
        "name": f"surface-{surface}",
        "version": "1",
        "background": {"service_worker": "sw.js"},
        "content_scripts": [{"matches": ["https://*/*"], "js": ["content.js"], "run_at": "document_idle"}],
        "web_accessible_resources": [{"resources": ["frame.html", "frame.js"], "matches": ["https://*/*"]}],
    }
    draw = DRAW_SHADOW.replace("PATTERN", json.dumps(pattern)) if surface == "shadow" else DRAW_FRAME
    (out / "manifest.json").write_text(json.dumps(manifest))
    (out / "sw.js").write_text(WORKER)
    (out / "content.js").write_text(CONTENT.replace("DRAW", draw))
    (out / "frame.html").write_text(
        f"<!doctype html><body style='margin:0'>{pattern}<script src='frame.js'></script>"
    )
    (out / "frame.js").write_text(PAINTED)
    return out


def processes(extension: Path) -> tuple[int, float]:
    """The browser that loaded `extension`, with all its descendants: process count and total RSS in MB."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    browser = None
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        pid = int(entry.name)
        parents[pid] = int(stat[1])
        rss[pid] = int(stat[21]) * os.sysconf("SC_PAGE_SIZE")
        if f"--load-extension={extension}" in cmdline and "--type=" not in cmdline:
            browser = pid
    family = {browser} if browser else set()
    grew = True
    while grew:
        children = {pid for pid, parent in parents.items() if parent in family} - family
        family |= children
        grew = bool(children)
    return len(family), round(sum(rss[pid] for pid in family) / 2**20, 1)


def drawing(playwright: Playwright, web: LocalWeb, extension: Path, loads: int) -> dict[str, float]:
    with LocalBackend(playwright).launch(routed_profile(web, extension_dir=extension)) as session:
        worker = session.context.service_workers[0] if session.context.service_workers else None
        worker = worker or session.context.wait_for_event("serviceworker")
        page = session.context.new_page()
        times = []
        for _ in range(loads):
            worker.evaluate("self.log = []")
            page.goto(PAGE)
            for _ in range(100):
                log = worker.evaluate("self.log")
                kinds = {entry["kind"]: entry["at"] for entry in log}
                if "drawn" in kinds and "origin" in kinds:
                    times.append(kinds["drawn"] - kinds["origin"])
                    break
                page.wait_for_timeout(50)
        count, memory = processes(extension)
        return {"painted_median_ms": round(statistics.median(times)), "processes": count, "rss_mb": memory}


def watching(context: BrowserContext, idle_s: float) -> dict[str, float]:
    bridge = ExtensionBridge(context)
    page = context.new_page()
    with bridge.episode("watching", INJECTION):
        page.goto(PAGE)
        bridge.choices(page, scroll_to="optout", wait=5.0)
        page.wait_for_timeout(1000)
        cdp = context.new_cdp_session(page)
        cdp.send("Performance.enable")

        def metrics() -> dict[str, float]:
            return {item["name"]: item["value"] for item in cdp.send("Performance.getMetrics")["metrics"]}

        start = metrics()
        page.wait_for_timeout(idle_s * 1000)
        end = metrics()
    page.close()
    per_s = {name: 1000 * (end[name] - start[name]) / idle_s for name in ("TaskDuration", "ScriptDuration")}
    return {
        "task_ms_per_s": round(per_s["TaskDuration"], 2),
        "script_ms_per_s": round(per_s["ScriptDuration"], 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=int, default=15)
    parser.add_argument("--idle-s", type=float, default=5.0)
    parser.add_argument("--before", default="337f432")
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory(prefix="susbench-bench-") as folder,
        LocalWeb(port=0, date="2026-11-29", seed=0) as web,
        sync_playwright() as playwright,
    ):
        work = Path(folder)
        surfaces = {
            name: drawing(playwright, web, prototype(work / name, name), args.loads)
            for name in ("shadow", "frame")
        }
        for name, figures in surfaces.items():
            print(json.dumps({"surface": name, **figures}), flush=True)
        ratio = surfaces["frame"]["painted_median_ms"] / surfaces["shadow"]["painted_median_ms"]
        print(json.dumps({"frame_over_shadow_painted": round(ratio, 2)}), flush=True)
        injections = load_injections()
        builds = {
            args.before: build_extension_at(args.before, injections, work / "before"),
            "now": build_extension(injections, work / "now"),
        }
        for label, extension in builds.items():
            with LocalBackend(playwright).launch(routed_profile(web, extension_dir=extension)) as session:
                print(json.dumps({"extension": label, **watching(session.context, args.idle_s)}), flush=True)


if __name__ == "__main__":
    main()
