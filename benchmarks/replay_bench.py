"""Replay benchmark (not a test): page load, throughput and memory against the anchors, in one run.

Run: `.venv/bin/python benchmarks/replay_bench.py [--loads 30] [--page https://voltcart.test/]`.
Page load: one shop home page recorded after scrolling (so lazy parts are in the snapshot), loaded
in a fresh Chromium context per load, modes interleaved (rotating order), medians of N loads:
the local web origin, nginx serving the snapshot's bytes, our proxy replay, our direct replay,
mitmdump's server replay and pywb's proxy mode, with each server process's CPU time per load
(load-independent where wall time is not). Every server is its own process; every HTTPS
certificate is trusted by SPKI pin only. Throughput: wrk, 64 keep-alive connections, 2 threads,
10 s, one recorded stylesheet over plain HTTP (absolute-form for the proxies). Memory: peak RSS
of a fresh replayer process opening and serving 1,000 requests from a 10 MB and a ~1 GB
synthetic snapshot of incompressible bodies (built under /tmp). The markdown report is printed
and saved to `benchmarks/results/replay-<date>.md`.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from contextlib import ExitStack, suppress
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

from playwright.sync_api import Browser, Page, sync_playwright
from playwright.sync_api import Error as PlaywrightError
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.replay_anchors import (
    ensure_apt,
    free_ports,
    mitm_record_command,
    mitm_replay_command,
    mitm_spki,
    nginx_command,
    nginx_config,
    proxied_leaf_spki,
    pywb_collection,
    pywb_command,
    running,
)
from susbench.browser import BrowserProfile, chromium_version, find_chromium
from susbench.core.certs import mitmproxy_ca_pin
from susbench.core.models import PageCapture, SnapshotManifest
from susbench.core.paths import REPO_ROOT
from susbench.recorder.proxy import RecordingProxy
from susbench.replayer.check import launch_browser
from susbench.replayer.proxy import ca_confdir
from susbench.replayer.tls import ReplayCA
from susbench.snapshot import Snapshot, write_wacz
from susbench.web import SITES, LocalWeb
from susbench.web.tls import ensure_tls

CLOCK_SEED_MS = 1_795_971_600_000
SETTLE_MS = 3000
WARMUP = 2
WRK = ["wrk", "-c64", "-t2", "-d10s"]
WRK_SMOKE = ["wrk", "-c64", "-t2", "-d1s"]
SYNTHETIC_BODY = 256 * 1024
PROBE_REQUESTS = 1000
SUSBENCH = [sys.executable, "-m", "susbench"]


def settle(page: Page) -> None:
    """Scroll to the bottom (lazy sections, lazy images), then wait for the network to go idle."""
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    with suppress(PlaywrightError):
        page.wait_for_load_state("networkidle", timeout=SETTLE_MS)


def visit(browser: Browser, url: str, extra: str | None) -> None:
    """The recorded visit: the page, scrolled, and `extra` (the throughput URL, over plain HTTP)."""
    context = browser.new_context(service_workers="block")
    try:
        page = context.new_page()
        page.goto(url, wait_until="load")
        settle(page)
        if extra:
            page.goto(extra)
    finally:
        context.close()


def record_snapshot(
    browser_for: Callable[[BrowserProfile], Browser], web: LocalWeb, page: str, out: Path
) -> int:
    """Our recorder's snapshot of the page; returns how many requests the visit made."""
    with RecordingProxy(host_map=web.resolve, upstream_ca=web.ca_cert_path) as recorder:
        profile = BrowserProfile(
            proxy=f"http://127.0.0.1:{recorder.port}",
            spki_pins=(recorder.spki,),
        )
        visit(browser_for(profile), page, None)
        count = len(recorder.log)
        recorder.write_snapshot(
            out,
            pages=(PageCapture(url=page, captured_at=datetime.now(UTC)),),
            clock_seed_ms=CLOCK_SEED_MS,
            targets=(page,),
        )
    return count


def throughput_url(snapshot: Path) -> str:
    """A recorded stylesheet (else script), as plain http:// for wrk."""
    with Snapshot.open(snapshot) as snap:
        entries = [e for e in snap.entries() if e.method == "GET" and e.status == 200]
    for mime in ("text/css", "javascript"):
        found = next((e.url for e in sorted(entries, key=lambda e: e.seq) if mime in e.mime), None)
        if found:
            return "http://" + found.split("://", 1)[1]
    raise RuntimeError("no stylesheet or script recorded")


def server_cpu_s(pid: int) -> float:
    """CPU seconds a server process and its children (nginx's workers) have used so far."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        with suppress(OSError):
            total += int((task / "schedstat").read_text().split()[0])
    with suppress(OSError):
        for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
            total += round(server_cpu_s(int(child)) * 1e9)
    return total / 1e9


def timed_load(browser: Browser, url: str, requests: list[int]) -> float:
    context = browser.new_context(service_workers="block")
    try:
        page = context.new_page()
        count = [0]
        page.on("request", lambda _: count.__setitem__(0, count[0] + 1))
        start = time.perf_counter()
        page.goto(url, wait_until="load")
        elapsed = (time.perf_counter() - start) * 1000
        requests.append(count[0])
        return elapsed
    finally:
        context.close()


def page_loads(
    browsers: dict[str, Browser], url: str, loads: int, pids: dict[str, int]
) -> tuple[dict[str, float], dict[str, float], dict[str, float]]:
    """Median load time, request count and server CPU ms (modes in `pids`) per mode; modes
    interleaved, order rotating. CPU is read from the server's process right after each load."""
    times: dict[str, list[float]] = {name: [] for name in browsers}
    counts: dict[str, list[int]] = {name: [] for name in browsers}
    cpu: dict[str, list[float]] = {name: [] for name in pids}
    names = list(browsers)
    for round_ in range(WARMUP + loads):
        order = names[round_ % len(names) :] + names[: round_ % len(names)]
        for name in order:
            before = server_cpu_s(pids[name]) if name in pids else 0.0
            try:
                elapsed = timed_load(browsers[name], url, counts[name])
            except PlaywrightError as exc:
                raise RuntimeError(f"{name}: {str(exc).splitlines()[0]}") from None
            if round_ >= WARMUP:
                times[name].append(elapsed)
                if name in pids:
                    cpu[name].append((server_cpu_s(pids[name]) - before) * 1000)
    return (
        {name: statistics.median(values) for name, values in times.items()},
        {name: statistics.median(values) for name, values in counts.items()},
        {name: statistics.median(values) for name, values in cpu.items()},
    )


def wrk(port: int, target: str, host: str, work: Path, command: list[str]) -> tuple[float, int]:
    """req/s and non-2xx count; `target` is origin-form, or absolute-form for the proxies."""
    script = work / f"wrk-{port}.lua"
    script.write_text(f'wrk.path = "{target}"\nwrk.headers["Host"] = "{host}"\n')
    out = subprocess.run(
        [*command, "-s", str(script), f"http://127.0.0.1:{port}"], capture_output=True, text=True
    )
    rate = re.search(r"Requests/sec:\s+([\d.]+)", out.stdout)
    errors = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out.stdout)
    if rate is None:
        raise RuntimeError(f"wrk failed: {out.stdout}{out.stderr}")
    return float(rate.group(1)), int(errors.group(1)) if errors else 0


def synthetic_snapshot(out: Path, total_bytes: int) -> Path:
    """A WACZ of incompressible 256 KB bodies (os.urandom), written with warcio + write_wacz."""
    warc = out.with_suffix(".warc.gz")
    count = max(1, total_bytes // SYNTHETIC_BODY)
    with open(warc, "wb") as handle:
        writer = WARCWriter(handle, gzip=True)
        for index in range(count):
            url = f"http://big.test/blob/{index}"
            body = os.urandom(SYNTHETIC_BODY)
            headers = StatusAndHeaders(
                "200 OK",
                [("Content-Type", "application/octet-stream"), ("Content-Length", str(len(body)))],
                protocol="HTTP/1.1",
            )
            writer.write_record(
                writer.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=headers)
            )
    manifest = SnapshotManifest(
        id=out.stem, created_at=datetime.now(UTC), targets=("http://big.test/",), clock_seed_ms=CLOCK_SEED_MS
    )
    write_wacz(out, warc, manifest)
    warc.unlink()
    return out


MEMORY_PROBE = """
import json, socket, sys, time
from susbench.replayer.direct import DirectReplayServer
from susbench.replayer.proxy import ReplayServer
path, mode, requests = sys.argv[1], sys.argv[2], int(sys.argv[3])
start = time.perf_counter()
with (DirectReplayServer if mode == "direct" else ReplayServer)(path) as server:
    opened = time.perf_counter() - start
    urls = [entry.url for entry in server.snapshot.entries()]
    start = time.perf_counter()
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        stream = sock.makefile("rb")
        for number in range(requests):
            url = urls[(number * 7919) % len(urls)]
            target = url if mode == "proxy" else "/" + url.split("/", 3)[3]
            sock.sendall(f"GET {target} HTTP/1.1\\r\\nHost: big.test\\r\\n\\r\\n".encode())
            assert b" 200 " in stream.readline()
            length = 0
            while (line := stream.readline()) != b"\\r\\n":
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            stream.read(length)
    served = time.perf_counter() - start
with open("/proc/self/status") as status:
    peak_kb = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
print(json.dumps({"rss_mb": peak_kb / 1024, "open_s": opened, "serve_s": served}))
"""


def memory_probe(snapshot: Path, mode: str) -> dict[str, float]:
    result = subprocess.run(
        [sys.executable, "-c", MEMORY_PROBE, str(snapshot), mode, str(PROBE_REQUESTS)],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        check=True,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


NOTES = [
    "Notes: every server is its own process (ours via `susbench replay serve [--mode direct]`). nginx "
    "serves the recorded bytes as they are; our replayers add the determinism shim to the HTML. "
    "nginx speaks TLS 1.2 and 1.3, as ours (Chromium picks 1.3 with both). "
    "pywb runs in proxy mode with HTTPS: it makes a fresh RSA key per host and sends no CA, so its "
    "leaf is pinned by SPKI after a CONNECT probe. mitmdump replays flows it recorded itself "
    "(`-w`, host-map addon), with `server_replay_reuse=true` (else each flow replays once) and "
    "`http2=false` (its HTTP/2 replay failed with ERR_HTTP2_PROTOCOL_ERROR).",
]


def ratio(value: float, base: float) -> str:
    return f"{value / base:.2f}" if base else "-"


def throughput_section(ports: dict[str, int], target: str, work: Path, command: list[str]) -> list[str]:
    """wrk against every server, one after another; ratios vs nginx and vs pywb."""
    host = urlsplit(target).hostname or ""
    origin_form = "/" + target.split("/", 3)[3]
    runs = {
        "nginx": wrk(ports["nginx_plain"], origin_form, host, work, command),
        "our direct replay": wrk(ports["direct"], origin_form, host, work, command),
        "our proxy replay": wrk(ports["proxy"], target, host, work, command),
        "mitmdump server replay": wrk(ports["mitm"], target, host, work, command),
        "pywb proxy mode": wrk(ports["pywb"], target, host, work, command),
    }
    pywb = runs["pywb proxy mode"][0]
    nginx = runs["nginx"][0]
    lines = [
        "",
        f"Throughput: `{' '.join(command)}`, GET {target} (Host {host}; absolute-form through the proxies).",
        "",
        "| throughput | req/s | vs nginx | vs pywb | non-2xx |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {name} | {rate:,.0f} | {ratio(rate, nginx)} | {ratio(rate, pywb)} | {bad} |"
        for name, (rate, bad) in runs.items()
    ]
    return lines


def memory_section(big_mb: int) -> list[str]:
    """Peak RSS, open and serve time of a fresh replayer process on a small and a big snapshot."""
    with tempfile.TemporaryDirectory(prefix="replay-bench-mem-", dir="/tmp") as tmp:
        small = synthetic_snapshot(Path(tmp) / "small.wacz", 10 << 20)
        big = synthetic_snapshot(Path(tmp) / "big.wacz", big_mb << 20)
        lines = [
            "",
            f"Memory: a fresh `python -c` process opens the snapshot and serves {PROBE_REQUESTS} GETs "
            "over one keep-alive connection (bodies 256 KB, os.urandom); peak RSS is the child's "
            "VmHWM (its `getrusage` ru_maxrss is useless here: Linux carries the forking parent's peak, "
            "~1.1 GB after packing the big snapshot, across exec).",
            "",
            "| replayer | snapshot | peak RSS MB | open s | serve 1,000 s |",
            "|---|---|---|---|---|",
        ]
        for mode in ("direct", "proxy"):
            for snap in (small, big):
                probe = memory_probe(snap, mode)
                size = snap.stat().st_size / (1 << 20)
                lines.append(
                    f"| {mode} | {size:,.0f} MB | {probe['rss_mb']:.0f} | {probe['open_s']:.2f} "
                    f"| {probe['serve_s']:.2f} |"
                )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--loads", type=int, default=30)
    parser.add_argument("--page", default="https://voltcart.test/")
    parser.add_argument("--big-mb", type=int, default=1024)
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "benchmarks" / "results")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="the smallest run (1 load, wrk for 1 s, a 10 MB big snapshot): that it still runs, not a figure",
    )
    args = parser.parse_args()
    if args.smoke:
        args.loads, args.big_mb = 1, 10
    ensure_apt("nginx", "wrk")
    load_before = os.getloadavg()
    report = [f"# Replay benchmark {datetime.now(UTC):%Y-%m-%d %H:%M} UTC", ""]
    with tempfile.TemporaryDirectory(prefix="replay-bench-", dir="/tmp") as tmp, ExitStack() as stack:
        work = Path(tmp)
        web = stack.enter_context(LocalWeb(port=0, date="2026-11-29", seed=0))
        playwright = stack.enter_context(sync_playwright())

        def browser_for(profile: BrowserProfile) -> Browser:
            return stack.enter_context(launch_browser(playwright, profile))

        snapshot = work / "shop.wacz"
        recorded = record_snapshot(browser_for, web, args.page, snapshot)
        target = throughput_url(snapshot)
        hosts = {urlsplit(args.page).hostname or ""}
        ports = dict(
            zip(
                ["nginx", "nginx_plain", "proxy", "direct", "mitm", "pywb", "record"],
                free_ports(7),
                strict=True,
            )
        )
        flows = work / "flows.mitm"
        with running(
            mitm_record_command(work, ports["record"], web.port, web.ca_cert_path, flows),
            ports["record"],
            "mitmdump -w",
            work,
        ):
            profile = BrowserProfile(
                proxy=f"http://127.0.0.1:{ports['record']}",
                spki_pins=(mitm_spki(work),),
            )
            visit(browser_for(profile), args.page, None)
            opener = urllib.request.build_opener(
                urllib.request.ProxyHandler({"http": f"http://127.0.0.1:{ports['record']}"})
            )
            opener.open(target, timeout=10).read()

        tls = ensure_tls(tuple(site.host for site in SITES))
        conf = nginx_config(snapshot, work / "nginx", tls, ports["nginx"], ports["nginx_plain"])
        pywb_dir = pywb_collection(snapshot, work / "pywb")
        serve = [*SUSBENCH, "replay", "serve", str(snapshot)]
        servers = {
            "nginx serving the same bytes": running(nginx_command(conf), ports["nginx"], "nginx", work),
            "our proxy replay": running(
                [*serve, "--port", str(ports["proxy"])], ports["proxy"], "replay proxy", work
            ),
            "our direct replay": running(
                [*serve, "--port", str(ports["direct"]), "--mode", "direct"],
                ports["direct"],
                "replay direct",
                work,
            ),
            "mitmdump server replay": running(
                mitm_replay_command(work, ports["mitm"], flows), ports["mitm"], "mitmdump", work
            ),
            "pywb proxy mode": running(pywb_command(ports["pywb"]), ports["pywb"], "pywb", pywb_dir),
        }
        pids = {name: stack.enter_context(server).pid for name, server in servers.items()}
        pywb_pins = tuple(proxied_leaf_spki(ports["pywb"], host) for host in sorted(hosts))

        def proxied(port: int, pins: tuple[str, ...]) -> BrowserProfile:
            return BrowserProfile(proxy=f"http://127.0.0.1:{port}", spki_pins=pins)

        def resolved(rules: str, pin: str) -> BrowserProfile:
            return BrowserProfile(host_resolver_rules=rules, spki_pins=(pin,))

        profiles = {
            "direct from the origin (local web)": resolved(f"MAP *.test 127.0.0.1:{web.port}", web.spki),
            "nginx serving the same bytes": resolved(f"MAP *.test 127.0.0.1:{ports['nginx']}", tls.spki),
            "our proxy replay": proxied(ports["proxy"], (mitmproxy_ca_pin(ca_confdir()),)),
            "our direct replay": resolved(
                f"MAP * 127.0.0.1:{ports['direct']}, EXCLUDE localhost", ReplayCA().spki
            ),
            "mitmdump server replay": proxied(ports["mitm"], (mitm_spki(work),)),
            "pywb proxy mode": proxied(ports["pywb"], pywb_pins),
        }
        browsers = {name: browser_for(profile) for name, profile in profiles.items()}
        medians, counts, cpu = page_loads(browsers, args.page, args.loads, pids)
        origin = medians["direct from the origin (local web)"]
        nginx = medians["nginx serving the same bytes"]
        direct = medians["our direct replay"]
        report += [
            f"Page {args.page}: {recorded} requests recorded (page scrolled to the bottom); "
            f"median requests per timed load (to `load`, not scrolled): "
            + ", ".join(f"{name} {count:.0f}" for name, count in counts.items()),
            f"Chromium: {chromium_version(find_chromium())}; {args.loads} loads per mode "
            f"(+{WARMUP} warm-up), fresh context each, interleaved; medians.",
            "",
            "| page load | median ms | vs nginx | vs origin | vs our direct | server CPU ms per load "
            "| CPU vs nginx |",
            "|---|---|---|---|---|---|---|",
        ]
        nginx_cpu = cpu["nginx serving the same bytes"]
        report += [
            f"| {name} | {value:.0f} | {ratio(value, nginx)} | {ratio(value, origin)} "
            f"| {ratio(value, direct)} | {f'{cpu[name]:.1f}' if name in cpu else '-'} "
            f"| {ratio(cpu[name], nginx_cpu) if name in cpu else '-'} |"
            for name, value in medians.items()
        ]
        report += [
            "",
            "Server CPU: each server process's (and its children's) CPU time across one timed load, "
            "median; the origin runs inside the benchmark's own process, so it has none.",
        ]
        for browser in browsers.values():
            with suppress(PlaywrightError):
                browser.close()

        report += throughput_section(ports, target, work, WRK_SMOKE if args.smoke else WRK)

    report += memory_section(args.big_mb)
    load_after = os.getloadavg()
    report += ["", *NOTES, ""]
    report += [
        f"Load average (1/5/15 min) at start {load_before[0]:.1f}/{load_before[1]:.1f}/{load_before[2]:.1f}, "
        f"at end {load_after[0]:.1f}/{load_after[1]:.1f}/{load_after[2]:.1f}; {os.cpu_count()} cores.",
    ]
    text = "\n".join(report) + "\n"
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    kind = "-smoke" if args.smoke else ""
    (args.out / f"replay{kind}-{datetime.now(UTC):%Y-%m-%d}.md").write_text(text)


if __name__ == "__main__":
    main()
