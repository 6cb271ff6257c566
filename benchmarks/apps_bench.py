"""The apps' costs, side by side in one run (a benchmark, not a test): set-up cold and warm, a
start (seeded and verified), recording time and snapshot size, and page loads of the replay
against the live app as a ratio.

Set-up cold installs the app into an empty cache (SUSBENCH_HOME in a temporary folder; pip's own
download cache stays as it is, so a machine that installed it once downloads nothing); warm is
`susbench apps install` with the app installed (what a warm fresh clone pays). Page loads: the
same pages, each in a fresh Chromium context, live (the app behind its front) and replayed from
the recording just made, interleaved, medians.

    .venv/bin/python benchmarks/apps_bench.py [--app oscar] [--tasks all] [--loads 8] [--cold]
    .venv/bin/python benchmarks/apps_bench.py --smallest   # one task, two loads, no cold install
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

from playwright.sync_api import Browser, sync_playwright

from susbench.apps import driver, serve_app
from susbench.apps.record import record_app
from susbench.browser import fresh_context, launch_browser, replay_profile, routed_profile
from susbench.browser.profiles import BrowserProfile
from susbench.replayer.check import page_urls
from susbench.replayer.direct import DirectReplayServer
from susbench.snapshot import Snapshot

DAY = date(2026, 12, 7)


def _install_seconds(app: str, home: Path | None) -> float:
    env = {**os.environ, **({"SUSBENCH_HOME": str(home)} if home else {})}
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "susbench", "apps", "install", app], env=env, check=True, capture_output=True
    )
    return time.perf_counter() - started


def _load_ms(browser: Browser, profile: BrowserProfile, url: str) -> float:
    context = fresh_context(browser, profile)
    page = context.new_page()
    started = time.perf_counter()
    page.goto(url, wait_until="load")
    elapsed = (time.perf_counter() - started) * 1000
    context.close()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--app", default="oscar")
    parser.add_argument("--tasks", default="all", help="the app's tasks to record (a selector)")
    parser.add_argument("--loads", type=int, default=8, help="loads of each page, live and replayed")
    parser.add_argument("--cold", action="store_true", help="also install into an empty cache")
    parser.add_argument("--smallest", action="store_true", help="one task, two loads, no cold install")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if args.smallest:
        args.tasks, args.loads, args.cold = (
            f"{args.app}-stool-basket" if args.app == "oscar" else "all",
            2,
            False,
        )
    lines = [f"# apps benchmark: {args.app}, {DAY}", "", f"load average at start: {os.getloadavg()}", ""]
    if args.cold:
        with tempfile.TemporaryDirectory(prefix="apps-cold-") as home:
            cold = _install_seconds(args.app, Path(home))
            lines.append(f"- set-up cold (empty cache, pip's download cache warm): {cold:.1f} s")
    assert driver(args.app).installed(), f"run `make apps` first ({args.app} is not installed)"
    warm = _install_seconds(args.app, None)
    lines.append(f"- set-up warm (`susbench apps install {args.app}`, installed): {warm:.2f} s")
    with tempfile.TemporaryDirectory(prefix="apps-bench-") as scratch:
        out = Path(scratch) / f"{args.app}.wacz"
        started = time.perf_counter()
        recorded = record_app(args.app, DAY, out=out, selector=args.tasks)
        seconds = time.perf_counter() - started
        with Snapshot.open(recorded.snapshot) as snapshot:
            recorded_pages = page_urls(snapshot)
        pages = [url for url, _ in recorded_pages if "/checkout/" not in url and "/basket/" not in url]
        tasks = len({session for _, session in recorded_pages})
        size = recorded.snapshot.stat().st_size
        lines.append(f"- recording {tasks} task flow(s), app start included: {seconds:.1f} s")
        lines.append(f"- snapshot size: {size / 1e6:.2f} MB")
        urls = sorted(set(pages))[:6]
        live_ms: dict[str, list[float]] = {url: [] for url in urls}
        replay_ms: dict[str, list[float]] = {url: [] for url in urls}
        started = time.perf_counter()
        with serve_app(args.app, DAY) as served:  # the live app of the page loads: its start is timed
            lines.append(
                f"- start (fresh copy, seeded, verified, fronted): {time.perf_counter() - started:.1f} s"
            )
            live_profile = routed_profile(served.front)
            with DirectReplayServer(recorded.snapshot) as replay, sync_playwright() as playwright:
                replayed_profile = replay_profile(replay)
                with (
                    launch_browser(playwright, live_profile) as live,
                    launch_browser(playwright, replayed_profile) as replayed,
                ):
                    for _ in range(args.loads):
                        for url in urls:
                            live_ms[url].append(_load_ms(live, live_profile, url))
                            replay_ms[url].append(_load_ms(replayed, replayed_profile, url))
        lines += [
            "",
            "| page | live ms (median) | replay ms (median) | replay / live |",
            "|---|---:|---:|---:|",
        ]
        ratios = []
        for url in urls:
            live_median, replay_median = statistics.median(live_ms[url]), statistics.median(replay_ms[url])
            ratios.append(replay_median / live_median)
            lines.append(
                f"| {url} | {live_median:.0f} | {replay_median:.0f} | {replay_median / live_median:.2f} |"
            )
        lines += [
            "",
            f"median ratio replay / live over {len(urls)} pages, {args.loads} loads each: "
            f"{statistics.median(ratios):.2f}",
        ]
    lines.append(f"load average at end: {os.getloadavg()}")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
