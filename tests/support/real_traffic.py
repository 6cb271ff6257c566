"""The recorder on real traffic: a real archive served as the live site, recorded, and both replayed.

`round_trip` serves a WARC made by another tool through `OriginServer`, records its page with
`susbench record` (the CLI in a subprocess: the real mitmproxy recorder, and mitmproxy allows one
master per process), then replays the new recording and the original archive with the project's
replayer in Chromium, one fresh context per page, and compares what each served and showed.
Used by tests/recorder/test_real_traffic.py and benchmarks/real_traffic_roundtrip.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

from playwright.sync_api import Playwright
from pydantic import Field

from susbench.analysis.pixels import pixel_diff
from susbench.browser import launch_browser, replay_profile, routed_profile
from susbench.core.models import Frozen, PageLook
from susbench.replayer.check import STARTUP_NOISE_S, load_page, page_urls
from susbench.replayer.factory import replay_server
from susbench.replayer.service import Coverage
from susbench.snapshot import Snapshot, import_warc
from tests.support.origin_server import OriginLogEntry, OriginServer

REPO = Path(__file__).resolve().parents[2]
MATCH_BELOW = 0.01
"""Screenshots match when under 1% of their pixels differ (`susbench.analysis.pixels`: a channel off
by more than 24); measured on the three archives the differences are far below it, and a page
whose stylesheet, font or images went missing differs by far more."""
PAGE_TIMEOUT_S = 20.0


class ReplayedPage(Frozen):
    """One page as a replay served it: its coverage and a full-page screenshot."""

    url: str
    coverage: Coverage
    archived: Coverage = Field(description="the requests to the hosts the archive holds (the origin's)")
    screenshot: Path
    error: str | None = None


class PageRoundTrip(Frozen):
    """A page of the archive: what the original's replay and the new recording's replay served."""

    url: str
    original: ReplayedPage
    recorded: ReplayedPage
    pixel_difference: float = Field(
        description="share of pixels differing, original's vs new recording's replay"
    )
    live_vs_recorded: float = Field(
        description="the same, the live site (the origin) vs the new recording's replay"
    )
    live_vs_original: float = Field(description="the same, the live site vs the original's replay")

    @property
    def matches(self) -> bool:
        return self.pixel_difference < MATCH_BELOW


class RoundTrip(Frozen):
    """One archive's round trip; `record_s` is the wall time of `susbench record`."""

    archive: str
    recording: Path
    record_s: float
    pages: tuple[PageRoundTrip, ...]
    origin_log: tuple[OriginLogEntry, ...]


def recordable_pages(server: OriginServer, original: Path) -> list[str]:
    """The original's pages (as `replay check` lists them) that are documents: no fragment, and a
    body (google.com's empty 200 HTML beacons, gen_204, are listed as pages but show nothing)."""
    bodies = {exchange.url: exchange.body for exchange in server.exchanges}
    with Snapshot.open(original) as snapshot:
        urls = [url for url, _session in page_urls(snapshot)]
    return [url for url in urls if "#" not in url and bodies.get(url)]


def record(server: OriginServer, urls: list[str], out: Path) -> float:
    """`susbench record URL... --resolve HOST:PORT=127.0.0.1:ORIGIN... --upstream-ca CA --out OUT`;
    returns its wall time in seconds."""
    command = [sys.executable, "-m", "susbench", "record", *urls, "--out", str(out)]
    command += ["--upstream-ca", str(server.ca.ca_pem)]
    for rule in server.resolve_rules():
        command += ["--resolve", rule]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    started = time.perf_counter()
    result = subprocess.run(
        command, capture_output=True, text=True, env=env, cwd=REPO, timeout=120, check=False
    )
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise RuntimeError(f"susbench record failed ({result.returncode}): {result.stderr[-2000:]}")
    return elapsed


def replay_pages(
    snapshot: Path, urls: list[str], hosts: set[str], folder: Path, playwright: Playwright
) -> list[ReplayedPage]:
    """Each URL replayed from `snapshot` (proxy mode, as `susbench replay check`), one episode and one
    fresh context per page, with a full-page screenshot; `hosts`: the archive's."""
    folder.mkdir(parents=True, exist_ok=True)
    pages = []
    with replay_server(snapshot) as server:
        profile = replay_profile(server)
        sessions = dict(page_urls(server.snapshot))
        with launch_browser(playwright, profile) as browser:
            time.sleep(STARTUP_NOISE_S)
            for index, url in enumerate(urls):
                episode_number = server.new_episode(sessions.get(url))
                shot = folder / f"page-{index}.png"
                error = load_page(browser, profile, url, PAGE_TIMEOUT_S, shot)
                own = [
                    entry
                    for entry in server.episode_log(episode_number)
                    if urlsplit(entry.url).hostname in hosts
                ]
                pages.append(
                    ReplayedPage(
                        url=url,
                        coverage=server.coverage(episode_number),
                        archived=Coverage.of(own),
                        screenshot=shot,
                        error=error,
                    )
                )
    return pages


def live_pages(server: OriginServer, urls: list[str], folder: Path, playwright: Playwright) -> list[Path]:
    """Screenshots of the "live site" itself (Chromium straight to the origin, no recorder): the
    reference that tells a recorder's fault from a page that renders differently from its archive."""
    folder.mkdir(parents=True, exist_ok=True)
    profile = routed_profile(server, PageLook())
    shots = [folder / f"page-{index}.png" for index in range(len(urls))]
    with launch_browser(playwright, profile) as browser:
        for url, shot in zip(urls, shots, strict=True):
            error = load_page(browser, profile, url, PAGE_TIMEOUT_S, shot)
            if error is not None:
                raise RuntimeError(f"the origin did not serve {url}: {error}")
    return shots


def _difference(first: Path, second: Path, out: Path | None = None) -> float:
    """`pixel_diff`, or 1.0 (all differ) when a page left no screenshot (it did not load)."""
    if not (first.is_file() and second.is_file()):
        return 1.0
    return pixel_diff(first, second, out)


def round_trip(warc: Path, folder: Path, playwright: Playwright) -> RoundTrip:
    """Serve `warc` as the live site, record its pages, replay both; see the module docstring."""
    imported = import_warc([warc], folder / "original.wacz")  # as `susbench snapshot import` does
    with OriginServer(warc, folder / "origin-ca") as server:
        urls = recordable_pages(server, imported)
        recording = folder / "new.wacz"
        live = live_pages(server, urls, folder / "live", playwright)
        asked_before = len(server.log)
        record_s = record(server, urls, recording)
        origin_log = tuple(server.log[asked_before:])
        hosts = set(server.hosts)
    original = replay_pages(imported, urls, hosts, folder / "original", playwright)
    recorded = replay_pages(recording, urls, hosts, folder / "recorded", playwright)
    pages = tuple(
        PageRoundTrip(
            url=old.url,
            original=old,
            recorded=new,
            pixel_difference=_difference(old.screenshot, new.screenshot, folder / f"diff-{index}.png"),
            live_vs_recorded=_difference(shot, new.screenshot),
            live_vs_original=_difference(shot, old.screenshot),
        )
        for index, (old, new, shot) in enumerate(zip(original, recorded, live, strict=True))
    )
    return RoundTrip(
        archive=warc.name, recording=recording, record_s=record_s, pages=pages, origin_log=origin_log
    )
