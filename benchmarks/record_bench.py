"""Recording cost, side by side in one run: direct vs mitmproxy vs mitmproxy + our WARC addon
(secrets masked, the default, and kept).

Every load uses a fresh Chromium context; modes are interleaved so drift hits them equally; the
figures are medians. Also reports the WARC size with and without revisit dedup.
Run: .venv/bin/python benchmarks/record_bench.py [--loads 30] [--url https://bazaarly.test/]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import zipfile
from pathlib import Path

from playwright.sync_api import Browser, sync_playwright

from susbench.browser import QUIET_FLAGS, chromium_version, find_chromium
from susbench.recorder.proxy import RecordingProxy
from susbench.web import LocalWeb


def _load(browser: Browser, url: str, proxy: str | None) -> tuple[float, int]:
    context = browser.new_context(proxy={"server": proxy} if proxy else None, service_workers="block")
    requests = 0

    def count(_request: object) -> None:
        nonlocal requests
        requests += 1

    page = context.new_page()
    page.on("request", count)
    started = time.perf_counter()
    page.goto(url, wait_until="load")
    elapsed = (time.perf_counter() - started) * 1000
    context.close()
    return elapsed, requests


def _warc_size(web: LocalWeb, browser: Browser, url: str, dedup: bool, loads: int) -> int:
    with RecordingProxy(host_map=web.resolve, upstream_ca=web.ca_cert_path, dedup=dedup) as proxy:
        for _ in range(loads):
            _load(browser, url, f"http://127.0.0.1:{proxy.port}")
        with tempfile.TemporaryDirectory() as tmp:
            out = proxy.write_snapshot(Path(tmp) / "size.wacz")
            with zipfile.ZipFile(out) as archive:
                return archive.getinfo("archive/data.warc.gz").file_size


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--loads", type=int, default=30)
    parser.add_argument("--url", default="https://bazaarly.test/")
    args = parser.parse_args()
    executable = find_chromium()
    with LocalWeb(port=0, date="2026-11-29") as web, sync_playwright() as playwright:
        base = [*QUIET_FLAGS, "--no-sandbox"]
        with (
            RecordingProxy(host_map=web.resolve, upstream_ca=web.ca_cert_path, record=False) as bare,
            RecordingProxy(host_map=web.resolve, upstream_ca=web.ca_cert_path, record=True) as warc,
            RecordingProxy(
                host_map=web.resolve, upstream_ca=web.ca_cert_path, record=True, keep_secrets=True
            ) as unmasked,
        ):
            pins = f"--ignore-certificate-errors-spki-list={web.spki},{bare.spki}"
            direct_browser = playwright.chromium.launch(
                executable_path=str(executable),
                args=[*base, f"--host-resolver-rules=MAP *.test {web.loopback}:{web.port}", pins],
            )
            proxy_browser = playwright.chromium.launch(
                executable_path=str(executable),
                args=[*base, pins, "--proxy-bypass-list=<-loopback>"],
                proxy={"server": "http://per-context"},
            )
            modes = {
                "direct from the origin": (direct_browser, None),
                "mitmproxy, no addon": (proxy_browser, f"http://127.0.0.1:{bare.port}"),
                "mitmproxy + WARC addon": (proxy_browser, f"http://127.0.0.1:{warc.port}"),
                "  the same, secrets kept": (proxy_browser, f"http://127.0.0.1:{unmasked.port}"),
            }
            for browser, proxy in modes.values():
                for _ in range(3):
                    _load(browser, args.url, proxy)
            times: dict[str, list[float]] = {name: [] for name in modes}
            requests = 0
            for _ in range(args.loads):
                for name, (browser, proxy) in modes.items():
                    elapsed, requests = _load(browser, args.url, proxy)
                    times[name].append(elapsed)
            with_dedup = _warc_size(web, proxy_browser, args.url, True, 5)
            without_dedup = _warc_size(web, proxy_browser, args.url, False, 5)
            direct_browser.close()
            proxy_browser.close()
    print(f"{chromium_version(executable)}; {args.url}: {requests} requests per load")
    print(f"{args.loads} interleaved loads per mode, fresh context each")
    medians = {name: statistics.median(values) for name, values in times.items()}
    reference = medians["direct from the origin"]
    bare_median = medians["mitmproxy, no addon"]
    print(f"{'mode':28} {'median ms':>10} {'vs direct':>10} {'vs mitmproxy':>13}")
    for name, median in medians.items():
        print(f"{name:28} {median:10.1f} {median / reference:10.2f} {median / bare_median:13.2f}")
    print(
        f"WARC for 5 loads: {with_dedup / 1024:.1f} KiB with revisit dedup, "
        f"{without_dedup / 1024:.1f} KiB without ({with_dedup / without_dedup:.2f}x)"
    )


if __name__ == "__main__":
    main()
