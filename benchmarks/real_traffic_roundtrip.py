"""The recorder on real traffic: each real archive in ../shared/realdata/warc/ served as the live
site (tests/support/origin_server.py), recorded with `susbench record`, and the new recording's replay set
beside the original's, page by page (tests/support/real_traffic.py does the work; this prints the table).

Run: .venv/bin/python benchmarks/real_traffic_roundtrip.py [--archives NAME ...]
    [--out benchmarks/results/real-traffic-DATE.md]
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks., tests.

from susbench.browser import chromium_version, find_chromium
from susbench.replayer.service import Coverage
from tests.support.real_traffic import MATCH_BELOW, RoundTrip, round_trip
from tests.support.shared import realdata_dir

ARCHIVES = ("books.toscrape.warc", "lil-projects.warc.gz", "wwwgooglecom.warc.gz")


def _served(coverage: Coverage) -> str:
    served = coverage.exact + coverage.canonical + coverage.fuzzy
    return f"{served}/{coverage.requests} ({coverage.matched_ratio:.0%})"


HEADER = (
    "page",
    "requests (original replay)",
    "served: original replay",
    "served: new recording's replay",
    "same, archive's hosts only: original / new",
    "pixels differing: original vs new replay",
    "match",
    "pixels differing: live site vs new replay / vs original replay",
    "record wall time",
)


def table(trips: list[RoundTrip]) -> list[str]:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    for trip in trips:
        for page in trip.pages:
            old, new = page.original, page.recorded
            cells = (
                page.url,
                str(old.coverage.requests),
                _served(old.coverage),
                _served(new.coverage),
                f"{_served(old.archived)} / {_served(new.archived)}",
                f"{page.pixel_difference:.2%}",
                "yes" if page.matches else "no",
                f"{page.live_vs_recorded:.2%} / {page.live_vs_original:.2%}",
                f"{trip.record_s:.1f} s",
            )
            lines.append("| " + " | ".join(cells) + " |")
    return lines


def origin_lines(trips: list[RoundTrip]) -> list[str]:
    lines = []
    for trip in trips:
        log = trip.origin_log
        counts = {kind: sum(entry.match == kind for entry in log) for kind in ("exact", "path", "miss")}
        encoded = {coding: sum(entry.encoding == coding for entry in log) for coding in ("gzip", "br")}
        lines.append(
            f"- {trip.archive}: while recording, the origin answered {len(log)} requests: {counts['exact']} "
            f"from their recorded URL, {counts['path']} from the same path with other query values, "
            f"{counts['miss']} not in the archive (404); {encoded['gzip']} sent gzip, {encoded['br']} brotli."
        )
    return lines


def misses(trips: list[RoundTrip]) -> list[str]:
    lines = []
    for trip in trips:
        for page in trip.pages:
            for side, replayed in (("original", page.original), ("new recording", page.recorded)):
                for url, count in sorted(replayed.coverage.misses.items()):
                    lines.append(f"- {page.url}, {side}'s replay missed {count}x `{url[:100]}`")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="write the report here (Markdown)")
    parser.add_argument(
        "--archives", nargs="+", choices=ARCHIVES, default=ARCHIVES, help="only these archives (default: all)"
    )
    args = parser.parse_args()
    folder = realdata_dir()
    if folder is None:
        raise SystemExit("../shared/realdata is absent: set SUSBENCH_SHARED to the shared/ folder")
    trips = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="real-traffic-") as work, sync_playwright() as playwright:
        for name in args.archives:
            trips.append(round_trip(folder / "warc" / name, Path(work) / name, playwright))
    total = time.perf_counter() - started
    chromium = chromium_version(find_chromium())
    lines = [
        f"# The recorder on real traffic, {datetime.date.today().isoformat()}",
        "",
        "Each real archive of `../shared/realdata/warc/` (node-warc, js-wacz, puppeteer-warc; MIT) served",
        "as the live site by `tests/support/origin_server.py` (one loopback port, HTTP and HTTPS, every",
        "host of the archive, a throwaway CA per run; bodies gzip- or brotli-encoded as the site sent them),",
        "recorded",
        "with `susbench record URL --resolve HOST:PORT=127.0.0.1:ORIGIN ... --upstream-ca CA`; then the",
        "original (imported as `susbench snapshot import` does) and the new recording replayed by the",
        "project's replayer (proxy mode, offline) in Chromium, a fresh context per page, settled as",
        "`susbench replay check` does. Served = exact + canonical + fuzzy of the page's requests",
        "(Chromium's own background requests apart). Full-page screenshots match when under",
        f"{MATCH_BELOW:.0%} of pixels differ (a channel off by more than 24, `susbench.analysis.pixels`).",
        "The live site = Chromium loading the page straight from the origin, without the recorder.",
        "",
        f"Machine: {os.cpu_count()} cores; {chromium}; run in {total:.0f} s.",
        "",
        *table(trips),
        "",
        *origin_lines(trips),
        "",
        "Requests a replay answered 404 (not in what it replays):",
        "",
        *misses(trips),
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if args.out is not None:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
